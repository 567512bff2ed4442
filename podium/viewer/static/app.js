// Podium run viewer: one agent run's search graph, its metric over time, its nodes in full, and
// live updates. Plain ES2020, no dependencies, nothing from the network. Every string that
// comes from the run is set as text (textContent); the one HTML string inserted is code_html,
// pygments' already-escaped highlighting. No eval, no inline handlers: the page's CSP forbids
// them.
//
// The graph: the server places the nodes (x in slots, y in layers: podium/viewer/layout.py);
// the page maps them to the screen with a zoom (x) and a stretch of the layers (y) that relaxes
// to 1:1 as one zooms in, and draws each node at a fixed size on screen, in one of three levels
// of detail: a box with its id, operator and metric; a chip with its metric; a dot. Where nodes
// are too small for their own labels, the most telling ones (the open node, the final node and
// its path, the best metrics) get a label beside them, placed so none overlaps another.
'use strict';

(() => {
  const SLOT_W = 130, SLOT_H = 84, MARGIN = 36;  // graph units of one slot, one layer
  const BOX = { w: 104, h: 40 }, CHIP = { w: 54, h: 20 };  // on-screen sizes (style.css too)
  const MAX_ZOOM = 3, MIN_ZOOM = 0.002;
  const POLL_LIVE_MS = 1000, POLL_IDLE_MS = 5000, SEARCH_DEBOUNCE_MS = 250;
  const OUTPUT_POLL_MS = 1000;
  const FOLD_CHARS = 1500, FOLD_LINES = 30;  // longer prompts and answers start folded
  const MAX_TAGS = 60;  // labels beside small nodes
  const SVG_NS = 'http://www.w3.org/2000/svg';
  const $ = (id) => document.getElementById(id);
  const narrow = window.matchMedia('(max-width: 900px)');  // style.css: one column

  const state = {
    run: null,            // RunJSON as last received
    nodes: [],            // its nodes, in id order
    byId: new Map(),      // id -> LightNode
    children: new Map(),  // id -> [child ids]
    colour: new Map(),    // id -> {fill, dark} for good nodes (the metric scale)
    view: { z: 1, stretch: 1, tx: 0, ty: 0 },  // graph units -> screen: see kx/ky
    drawnAt: null,        // the view the node layer's positions were computed for
    lod: 'box',
    fitted: false,        // false until the first fit (the user's zoom is kept after it)
    selected: null,       // the open node's id
    cursor: null,         // the keyboard cursor (j/k), a node id
    shownSig: null,       // the open node's signature when its detail was drawn
    detail: null,         // the open node's NodeDetail
    codeView: 'code',     // code | unified | split
    diffParent: 0,        // which parent's diff (index into detail.diffs)
    matches: null,        // ids matching the text filter; null when there is none
    searchSeq: 0,
    collapsed: new Set(), // ids whose subtrees are folded away
    hidden: new Set(),    // ids inside a collapsed subtree
    sort: { key: 'id', dir: 1 },
    tab: 'list',
    chartX: 'step',
    started: false,
    outputTimer: null,
  };

  // ---- small helpers -----------------------------------------------------------------------

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  function svg(tag, attrs, text) {
    const e = document.createElementNS(SVG_NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function fmtMetric(m) {
    if (m === null || m === undefined) return '—';
    if (Math.abs(m) >= 100) return m.toFixed(Math.abs(m) >= 1000 ? 0 : 1);
    return String(Number(m.toPrecision(4)));
  }
  const fmtInt = (n) => (n || 0).toLocaleString('en-US');
  const fmtCost = (c) => '$' + (c || 0).toFixed((c || 0) < 1 ? 4 : 2);
  function fmtSecs(s) {
    if (s === null || s === undefined) return '—';
    if (s < 60) return s.toFixed(s < 10 ? 2 : 1) + ' s';
    const m = Math.floor(s / 60), h = Math.floor(m / 60);
    if (h) return `${h} h ${String(m % 60).padStart(2, '0')} m`;
    return `${m} m ${String(Math.round(s % 60)).padStart(2, '0')} s`;
  }
  function fmtBytes(b) {
    const units = ['B', 'kB', 'MB', 'GB', 'TB'];
    let i = 0;
    while (b >= 1000 && i < units.length - 1) { b /= 1000; i++; }
    return (i ? b.toFixed(1) : String(b)) + ' ' + units[i];
  }
  const fmtTime = (iso) => (iso ? iso.replace('T', ' ').replace(/\.\d+/, '')
    .replace(/\+00:00$/, ' UTC') : '—');
  const lowerIsBetter = () => Boolean(state.run && state.run.run.lower_is_better);
  const direction = (lower) => (lower === null || lower === undefined ? ''
    : lower ? ' (lower is better)' : ' (higher is better)');
  // The metric as the graph and the list both show it: a buggy node's ✗ comes first, with the
  // metric it printed (if any) after it, so the two never disagree.
  function metricLabel(n) {
    if (n.kind === 'buggy') return n.metric !== null ? `✗ ${fmtMetric(n.metric)}` : '✗';
    if (n.metric !== null) return fmtMetric(n.metric);
    return n.kind === 'running' ? n.state : n.kind;
  }
  // What makes the open node's detail stale in live mode.
  const signature = (n) => [n.state, n.kind, n.metric, n.best, n.on_best_path, n.finished_at]
    .join('|');
  const isDiffable = (n) => n.parents.length > 0;

  // ---- data source: the live server, or the data embedded in an exported file ---------------

  // The fields /api/search looks in: export mode searches the same ones locally.
  const searched = (d) => [d.plan, d.code, d.output, d.bug_reason, d.summary,
    d.exec && d.exec.error_name, d.exec && d.exec.error_value, d.exec && d.exec.traceback];

  // An export's node details, packed (podium/viewer/packing.py): long text fields are lists of
  // chunks stored once. Parsed on first use, so the graph is drawn without reading them.
  function packedDetails(script) {
    let details = null;
    const text = (chunks, v) => (v && typeof v === 'object' && Array.isArray(v.$c)
      ? v.$c.map((i) => chunks[i]).join('') : v);
    const unpack = (chunks, d) => {
      const out = { ...d };
      for (const k of ['plan', 'code', 'code_html', 'output']) out[k] = text(chunks, d[k]);
      if (d.exec) out.exec = { ...d.exec, traceback: text(chunks, d.exec.traceback) };
      if (d.notebook) {
        out.notebook = { ...d.notebook, cells: (d.notebook.cells || []).map((c) => ({
          ...c, source: text(chunks, c.source), output: text(chunks, c.output),
          error: c.error ? { ...c.error, traceback: text(chunks, c.error.traceback) } : c.error,
        })) };
      }
      out.calls = (d.calls || []).map((c) => ({
        ...c, messages: (c.messages || []).map((m) => ({ ...m, content: text(chunks, m.content) })),
        response: c.response ? { ...c.response, text: text(chunks, c.response.text) } : c.response,
      }));
      return out;
    };
    return () => {
      if (details === null) {
        const data = script ? JSON.parse(script.textContent) : { chunks: [], details: {} };
        details = new Map(Object.entries(data.details || {})
          .map(([id, d]) => [id, () => unpack(data.chunks || [], d)]));
      }
      return details;
    };
  }

  function exportSource(run, detailsScript) {
    const all = packedDetails(detailsScript), cache = new Map();
    const get = (id) => {
      const key = String(id);
      if (!cache.has(key)) { const f = all().get(key); cache.set(key, f ? f() : null); }
      return cache.get(key);
    };
    return {
      live: false,
      run: async () => run,
      node: async (id) => get(id),
      output: async () => null,
      search: async (q) => {
        const needle = q.toLowerCase();
        return run.nodes.map((n) => n.id).filter((id) => searched(get(id) || state.byId.get(id)
          || {}).some((t) => typeof t === 'string' && t.toLowerCase().includes(needle)));
      },
    };
  }

  // The live server. URLs are relative: a sweep serves each run's page under /runs/<id>/.
  function liveSource() {
    let etag = null;
    const cache = new Map();  // id -> {sig, detail}: refetched when the node changes
    return {
      live: true,
      async run() {
        const headers = etag ? { 'If-None-Match': etag } : {};
        const r = await fetch('api/run', { headers, cache: 'no-store' });
        if (r.status === 304) return null;  // nothing new
        if (!r.ok) throw new Error(`GET api/run answered ${r.status}`);
        const data = await r.json();
        etag = r.headers.get('ETag');
        return data;
      },
      async node(id) {
        const light = state.byId.get(id), sig = light ? signature(light) : '';
        const hit = cache.get(id);
        if (hit && hit.sig === sig && light && light.kind !== 'running') return hit.detail;
        const r = await fetch(`api/node/${id}`, { cache: 'no-store' });
        if (!r.ok) return null;
        const detail = await r.json();
        cache.set(id, { sig, detail });
        return detail;
      },
      async output(id) {
        const r = await fetch(`api/node/${id}/output`, { cache: 'no-store' });
        return r.ok ? r.json() : null;
      },
      async search(q) {
        const r = await fetch('api/search?q=' + encodeURIComponent(q), { cache: 'no-store' });
        if (!r.ok) throw new Error(`GET api/search answered ${r.status}`);
        return (await r.json()).ids;
      },
    };
  }

  const embedded = $('podium-data');
  const source = embedded
    ? exportSource(JSON.parse(embedded.textContent), $('podium-details'))
    : liveSource();

  // ---- the metric's colour scale -------------------------------------------------------------

  // Good nodes are coloured by where their metric sits between the 10th percentile of the good
  // nodes' metrics (pale) and the best one (deep green), in the task's direction; worse than
  // the 10th percentile is as pale as it. A percentile, not the worst, so one outlier does not
  // wash every other node out.
  function colourScale() {
    const sign = lowerIsBetter() ? -1 : 1;
    const good = state.nodes.filter((n) => n.kind === 'good' && n.metric !== null);
    const vals = good.map((n) => sign * n.metric).sort((a, b) => a - b);
    state.colour = new Map();
    if (!vals.length) return { lo: null, hi: null };
    const lo = vals[Math.floor((vals.length - 1) * 0.1)], hi = vals[vals.length - 1];
    for (const n of good) {
      const t = hi > lo ? Math.min(1, Math.max(0, (sign * n.metric - lo) / (hi - lo))) : 1;
      state.colour.set(n.id, { t, fill: ramp(t), dark: t > 0.6 });
    }
    return { lo: sign * lo, hi: sign * hi };
  }

  // t in [0, 1] -> a green from pale to deep: one hue and saturation, the lightness falling,
  // so a better metric is always a darker colour (every channel falls with the lightness).
  function ramp(t) {
    return `hsl(140, 55%, ${(90 - 66 * t).toFixed(1)}%)`;
  }

  function drawLegend(range) {
    const has = range.lo !== null;
    $('legend').querySelector('.scale').hidden = !has;
    if (!has) return;
    $('legend-worst').textContent = fmtMetric(range.lo);
    $('legend-best').textContent = `${fmtMetric(range.hi)} ★${lowerIsBetter() ? ' (lower is better)' : ''}`;
    $('legend').title = 'good nodes: pale = at or below the 10th percentile of good metrics, '
      + 'deep green = the best metric';
  }

  // ---- the view: zoom, stretch, pan --------------------------------------------------------

  // kx = z; ky = z stretched (the layers spread to fill the pane at fit), the stretch fading to
  // none by z = 1, so a close view is never distorted.
  const kx = () => state.view.z;
  const ky = () => Math.min(state.view.z * state.view.stretch, Math.max(state.view.z, 1));
  const gx = (n) => MARGIN + n.x * SLOT_W;
  const gy = (n) => MARGIN + n.y * SLOT_H;
  const sx = (n) => gx(n) * kx() + state.view.tx;
  const sy = (n) => gy(n) * ky() + state.view.ty;
  const graphW = () => 2 * MARGIN + (state.run ? state.run.layout.width : 0) * SLOT_W;
  const graphH = () => 2 * MARGIN + (state.run ? state.run.layout.depth : 0) * SLOT_H;

  function paneSize() {
    const pane = $('graph-pane');
    return { w: pane.clientWidth, h: pane.clientHeight };
  }

  function lodFor() {
    const w = SLOT_W * kx(), h = SLOT_H * ky();
    if (w >= BOX.w + 12 && h >= BOX.h + 14) return 'box';
    if (w >= CHIP.w + 4 && h >= CHIP.h + 6) return 'chip';
    return 'dot';
  }

  // The whole graph in the pane: as large as its width allows (at most 100%), the layers spread
  // over the pane's height when there is room.
  function fit() {
    if (!state.run || !state.nodes.length) return;
    const { w, h } = paneSize(), pad = 24;
    const zx = (w - pad) / graphW(), zy = (h - pad) / graphH();
    const z = Math.max(MIN_ZOOM, Math.min(1, zx, zy));
    const wantY = Math.min(zy, Math.max(z, 1));
    state.view.stretch = zy > z ? Math.max(1, wantY / z) : 1;
    state.view.z = z;
    state.view.tx = (w - graphW() * kx()) / 2;
    state.view.ty = (h - graphH() * ky()) / 2;
    state.fitted = true;
    redrawView();
  }

  // Zoom by ``factor`` keeping the point (px, py) of the pane where it is.
  function zoomBy(factor, px, py) {
    const { w, h } = paneSize();
    const ax = px ?? w / 2, ay = py ?? h / 2;
    const gxa = (ax - state.view.tx) / kx(), gya = (ay - state.view.ty) / ky();
    state.view.z = Math.min(MAX_ZOOM, Math.max(MIN_ZOOM, state.view.z * factor));
    state.view.tx = ax - gxa * kx();
    state.view.ty = ay - gya * ky();
    redrawView();
  }

  function setZoom(z) { zoomBy(z / state.view.z); }

  function panBy(dx, dy) {
    state.view.tx += dx;
    state.view.ty += dy;
    applyPan();
  }

  // Centre the view on a node if it is not well inside it.
  function scrollToNode(id) {
    const n = state.byId.get(id);
    if (n && n.x !== null) {
      const { w, h } = paneSize(), x = sx(n), y = sy(n), m = 40;
      if (x < m || x > w - m || y < m || y > h - m) {
        state.view.tx += w / 2 - x;
        state.view.ty += h / 2 - y;
        redrawView();
      }
    }
    const row = document.querySelector(`#node-list tr[data-node-id="${id}"]`), list = $('list-pane');
    if (row && !row.hidden && (row.offsetTop < list.scrollTop + 30
        || row.offsetTop + row.offsetHeight > list.scrollTop + list.clientHeight)) {
      list.scrollTop = row.offsetTop - list.clientHeight / 2;
    }
  }

  // ---- the graph ---------------------------------------------------------------------------

  function tooltip(n) {
    const lines = [`#${n.id} ${n.operator} · ${n.kind}${n.best ? ' · final node ★' : ''}`];
    if (n.parents.length) lines.push('parents: ' + n.parents.map((p) => '#' + p).join(', '));
    if (n.metric !== null) lines.push('metric ' + fmtMetric(n.metric));
    if (n.bug_reason) lines.push('bug: ' + n.bug_reason);
    if (n.kind === 'running') lines.push('state: ' + n.state);
    if (state.collapsed.has(n.id)) lines.push(`collapsed: ${descendants(n.id).size} nodes hidden`);
    return lines.join('\n');
  }

  function edgePath(a, b) {
    const x1 = gx(a), y1 = gy(a), x2 = gx(b), y2 = gy(b), my = (y1 + y2) / 2;
    return `M${x1},${y1} C${x1},${my} ${x2},${my} ${x2},${y2}`;
  }

  // Builds every edge and node element (on new data); positions come from placeNodes.
  function buildGraph() {
    const edges = $('edge-layer'), nodes = $('node-layer');
    edges.textContent = '';
    nodes.textContent = '';
    $('graph-empty').hidden = state.nodes.length > 0;
    const plain = [], secondary = [], path = [];
    for (const n of state.nodes) {
      for (const p of n.parents) {
        const a = state.byId.get(p);
        if (!a) continue;
        const best = n.on_best_path && a.on_best_path;
        const second = n.tree_parent !== null && p !== n.tree_parent;
        const e = svg('path', {
          d: edgePath(a, n), 'data-from': p, 'data-to': n.id,
          class: `edge to-${n.kind}${best ? ' on-best-path' : ''}${second ? ' secondary' : ''}`,
        });
        (best ? path : second ? secondary : plain).push(e);
      }
    }
    edges.append(...plain, ...secondary, ...path);  // the best path drawn last, over the others
    const frag = document.createDocumentFragment();
    for (const n of state.nodes) frag.appendChild(nodeElement(n));
    nodes.appendChild(frag);
  }

  function nodeElement(n) {
    const cls = ['node', n.kind, n.best && 'best', n.on_best_path && 'on-best-path'];
    const c = state.colour.get(n.id);
    if (c && c.dark) cls.push('dark');
    const g = svg('g', {
      class: cls.filter(Boolean).join(' '), 'data-node-id': n.id, tabindex: -1, role: 'button',
    });
    if (c) g.style.setProperty('--fill', c.fill);
    g.append(
      svg('title', {}, tooltip(n)),
      svg('rect', { class: 'ring' }),
      svg('rect', { class: 'box' }),
      svg('circle', { class: 'dot' }),
      svg('text', { class: 'nid' }, `#${n.id} ${n.operator}`),
      svg('text', { class: 'nmetric' }, metricLabel(n)),
    );
    if (n.best) g.appendChild(svg('text', { class: 'star' }, '★'));
    if (state.collapsed.has(n.id)) {
      g.classList.add('collapsed');
      g.appendChild(svg('text', { class: 'fold' }, `+${descendants(n.id).size}`));
    }
    return g;
  }

  // Node positions for the current zoom (the pan is a translation of the layers on top).
  function placeNodes() {
    state.drawnAt = { tx: state.view.tx, ty: state.view.ty, z: kx(), zy: ky() };
    for (const g of $('node-layer').children) {
      const n = state.byId.get(Number(g.dataset.nodeId));
      g.setAttribute('transform', `translate(${sx(n).toFixed(1)},${sy(n).toFixed(1)})`);
    }
    $('node-layer').removeAttribute('transform');
    $('label-layer').removeAttribute('transform');
    $('edge-layer').setAttribute('transform',
      `matrix(${kx()} 0 0 ${ky()} ${state.view.tx} ${state.view.ty})`);
  }

  function applyPan() {
    const d = state.drawnAt;
    if (!d) return;
    const t = `translate(${state.view.tx - d.tx},${state.view.ty - d.ty})`;
    $('node-layer').setAttribute('transform', t);
    $('label-layer').setAttribute('transform', t);
    $('edge-layer').setAttribute('transform',
      `matrix(${kx()} 0 0 ${ky()} ${state.view.tx} ${state.view.ty})`);
    scheduleTags();
    drawMinimap();
  }

  let viewFrame = 0;
  function redrawView() {
    if (viewFrame) return;
    viewFrame = requestAnimationFrame(() => {
      viewFrame = 0;
      const lod = lodFor();
      const g = $('graph');
      g.classList.remove('lod-box', 'lod-chip', 'lod-dot');
      g.classList.add('lod-' + lod);
      state.lod = lod;
      const r = Math.max(3, Math.min(7, Math.min(SLOT_W * kx(), SLOT_H * ky()) * 0.3));
      g.style.setProperty('--dot-r', r.toFixed(1) + 'px');
      $('zoom-reset').textContent = Math.round(state.view.z * 100) + '%';
      placeNodes();
      drawMinimap();
      drawTags();
      window.performance.mark('podium:view-drawn');
    });
  }

  // ---- labels beside small nodes -------------------------------------------------------------

  // Which nodes deserve a label when they are too small for their own, most telling first.
  function tagCandidates() {
    const sign = lowerIsBetter() ? 1 : -1, seen = new Set(), out = [];
    const add = (id) => {
      const n = state.byId.get(id);
      if (n && !seen.has(id) && !state.hidden.has(id)) { seen.add(id); out.push(n); }
    };
    add(state.selected);
    add(state.cursor);
    const best = state.nodes.find((n) => n.best);
    if (best) add(best.id);
    state.nodes.filter((n) => n.on_best_path).sort((a, b) => b.y - a.y).forEach((n) => add(n.id));
    state.nodes.filter((n) => n.kind === 'running').forEach((n) => add(n.id));
    state.nodes.filter((n) => n.kind === 'good' && n.metric !== null)
      .sort((a, b) => sign * (a.metric - b.metric)).forEach((n) => add(n.id));
    return out;
  }

  let tagTimer = 0;
  function scheduleTags() {
    clearTimeout(tagTimer);
    tagTimer = setTimeout(() => { placeNodes(); drawTags(); }, 120);  // once panning pauses
  }

  // Labels go where they cover no other label and no node (a chip shows its metric already, so
  // a chip's label is its id). Most telling first, at most MAX_TAGS; the open node, the cursor's
  // and the final node are labelled even over other nodes, never over a label.
  function drawTags() {
    const layer = $('label-layer');
    layer.textContent = '';
    if (state.lod === 'box' || !state.nodes.length) return;
    const { w, h } = paneSize(), chip = state.lod === 'chip';
    const half = chip ? { w: CHIP.w / 2, h: CHIP.h / 2 } : { w: 6, h: 6 };
    const nodes = [], labels = overlays();
    for (const n of state.nodes) {
      if (state.hidden.has(n.id)) continue;
      const x = sx(n), y = sy(n);
      if (x > -half.w && x < w + half.w && y > -half.h && y < h + half.h) {
        nodes.push({ x0: x - half.w, x1: x + half.w, y0: y - half.h, y1: y + half.h, id: n.id });
      }
    }
    const clear = (b, boxes) => boxes.every((p) => p.id === b.id || b.x1 <= p.x0 || b.x0 >= p.x1
      || b.y1 <= p.y0 || b.y0 >= p.y1);
    const must = new Set([state.selected, state.cursor, ...state.nodes.filter((n) => n.best).map((n) => n.id)]);
    let count = 0;
    for (const n of tagCandidates()) {
      if (count >= MAX_TAGS) break;
      const x = sx(n), y = sy(n);
      if (x < 0 || x > w || y < 0 || y > h) continue;
      const label = chip ? `#${n.id}` : `#${n.id} ${metricLabel(n)}`, tw = 7 * label.length + 8;
      const at = (x0, yc) => ({ x0, x1: x0 + tw, y0: yc - 9, y1: yc + 9, id: n.id, yc });
      const spots = [at(x + half.w + 2, y), at(x - half.w - 2 - tw, y),
        at(x - tw / 2, y - half.h - 11), at(x - tw / 2, y + half.h + 11)]
        .filter((b) => b.x0 >= 0 && b.x1 <= w && b.y0 >= 0 && b.y1 <= h && clear(b, labels));
      const box = spots.find((b) => clear(b, nodes)) || (must.has(n.id) ? spots[0] : null);
      if (!box) continue;
      labels.push(box);
      count++;
      const tag = svg('g', { class: `tag ${n.kind}${n.on_best_path ? ' on-best-path' : ''}${n.best ? ' best' : ''}`,
        'data-node-id': n.id, transform: `translate(${box.x0},${box.yc})` });
      tag.append(svg('rect', { x: 0, y: -9, width: tw, height: 18, rx: 4 }),
        svg('text', { x: 4, y: 4 }, label));
      layer.appendChild(tag);
    }
  }

  // The pane's own controls (zoom buttons, overview), which labels must not hide under.
  function overlays() {
    const pane = $('graph-pane').getBoundingClientRect(), out = [];
    for (const e of [$('graph-pane').querySelector('.zoom'), $('minimap')]) {
      if (!e || e.hidden) continue;
      const r = e.getBoundingClientRect();
      out.push({ x0: r.left - pane.left, x1: r.right - pane.left, y0: r.top - pane.top, y1: r.bottom - pane.top, id: null });
    }
    return out;
  }

  // ---- the overview (minimap) ----------------------------------------------------------------

  // The overview draws the graph as the fitted view does: the layers spread by the fit's
  // stretch (as far as the overview's height allows), so a wide, shallow tree is not a line.
  function minimapScale() {
    const c = $('minimap');
    const fitX = (c.width - 8) / graphW(), fitY = (c.height - 8) / graphH();
    const sx = Math.min(fitX, fitY), sy = Math.min(fitY, sx * state.view.stretch);
    return { sx, sy, ox: (c.width - graphW() * sx) / 2, oy: (c.height - graphH() * sy) / 2 };
  }

  // Shown only while part of the graph is out of view.
  function drawMinimap() {
    const c = $('minimap'), ctx = c.getContext('2d');
    if (!ctx) return;
    ctx.clearRect(0, 0, c.width, c.height);
    const { w, h } = paneSize();
    const x0 = state.view.tx, y0 = state.view.ty;
    const inView = x0 >= -1 && y0 >= -1 && x0 + graphW() * kx() <= w + 1 && y0 + graphH() * ky() <= h + 1;
    c.hidden = !state.nodes.length || inView;
    if (c.hidden) return;
    const { sx: mx, sy: my, ox, oy } = minimapScale();
    ctx.drawImage(minimapNodes(c, mx, my, ox, oy), 0, 0);
    ctx.strokeStyle = '#0969da';
    ctx.lineWidth = 1.5;
    ctx.strokeRect(ox + (-state.view.tx / kx()) * mx, oy + (-state.view.ty / ky()) * my,
      (w / kx()) * mx, (h / ky()) * my);
  }

  // The overview's nodes, drawn once per change of the graph (not per pan: a pan only moves
  // the rectangle over them).
  let minimapCache = { key: null, canvas: null };
  function minimapNodes(c, mx, my, ox, oy) {
    const key = [state.run && state.run.version, state.hidden.size, mx, my, c.width, c.height].join('|');
    if (minimapCache.key === key) return minimapCache.canvas;
    const canvas = document.createElement('canvas');
    canvas.width = c.width;
    canvas.height = c.height;
    const ctx = canvas.getContext('2d');
    for (const n of state.nodes) {
      if (state.hidden.has(n.id)) continue;
      const col = state.colour.get(n.id);
      ctx.fillStyle = col ? col.fill : { buggy: '#cf222e', running: '#bf8700' }[n.kind] || '#8c959f';
      const size = n.on_best_path ? 3 : 2;
      ctx.fillRect(ox + gx(n) * mx - 1, oy + gy(n) * my - 1, size, size);
    }
    minimapCache = { key, canvas };
    return canvas;
  }

  // Centre the view on the graph point under a click or drag on the minimap.
  function minimapGoto(e) {
    const box = $('minimap').getBoundingClientRect(), { sx: mx, sy: my, ox, oy } = minimapScale();
    const gxp = (e.clientX - box.left - ox) / mx, gyp = (e.clientY - box.top - oy) / my;
    const { w, h } = paneSize();
    state.view.tx = w / 2 - gxp * kx();
    state.view.ty = h / 2 - gyp * ky();
    redrawView();
  }

  // ---- collapsed subtrees --------------------------------------------------------------------

  function descendants(id) {
    const out = new Set(), todo = [...(state.children.get(id) || [])];
    while (todo.length) {
      const c = todo.pop();
      if (out.has(c)) continue;
      out.add(c);
      todo.push(...(state.children.get(c) || []));
    }
    return out;
  }

  // A node is hidden when it has parents and every one of them is collapsed or hidden.
  function computeHidden() {
    const hidden = new Set();
    for (const n of state.nodes) {  // id order: parents first
      const ps = n.parents.filter((p) => state.byId.has(p));
      if (ps.length && ps.every((p) => state.collapsed.has(p) || hidden.has(p))) hidden.add(n.id);
    }
    state.hidden = hidden;
  }

  function toggleCollapse(id) {
    if (!state.byId.has(id) || !(state.children.get(id) || []).length) return;
    if (state.collapsed.has(id)) state.collapsed.delete(id); else state.collapsed.add(id);
    computeHidden();
    buildGraph();
    placeNodes();
    drawMinimap();
    drawTags();
    applyClasses();
    drawCollapseButton();
  }

  function drawCollapseButton() {
    const b = $('detail-collapse'), id = state.selected;
    const has = id !== null && (state.children.get(id) || []).length > 0;
    b.hidden = !has;
    if (has) b.textContent = state.collapsed.has(id) ? `expand (${descendants(id).size} hidden)` : 'collapse subtree';
  }

  // ---- the node list ---------------------------------------------------------------------------

  function whyText(n) {
    if (n.kind === 'buggy') return n.bug_reason || 'buggy';
    if (n.kind === 'running') return n.state + '…';
    if (n.kind === 'interrupted') return n.state === 'interrupted' ? 'interrupted' : `interrupted while ${n.state}`;
    return n.summary || '';
  }

  function sortValue(n, key) {
    switch (key) {
      case 'parents': return n.parents.length ? n.parents[0] : -1;
      // Best first in the task's direction; a buggy node's metric (a leaked score, say) is not
      // one to rank, so buggy nodes come after the good ones.
      case 'metric': return n.metric === null || n.kind !== 'good' ? null : (lowerIsBetter() ? n.metric : -n.metric);
      case 'why': return whyText(n).toLowerCase();
      case 'step': return n.step;
      default: return n[key];
    }
  }

  // Rows in the sort's order; missing values last whichever the direction.
  function sortedNodes() {
    const { key, dir } = state.sort;
    return [...state.nodes].sort((a, b) => {
      const va = sortValue(a, key), vb = sortValue(b, key);
      if (va === vb) return a.id - b.id;
      if (va === null || va === undefined) return 1;
      if (vb === null || vb === undefined) return -1;
      return (va < vb ? -1 : 1) * dir;
    });
  }

  function drawList() {
    const body = document.querySelector('#node-list tbody');
    const frag = document.createDocumentFragment();
    for (const n of sortedNodes()) {
      const tr = el('tr', n.kind + (n.on_best_path ? ' on-best-path' : ''));
      tr.dataset.nodeId = String(n.id);
      const kind = el('td'), why = el('td', 'why', whyText(n));
      kind.appendChild(el('span', 'badge ' + n.kind, n.kind));
      why.title = why.textContent;
      tr.append(
        el('td', 'num', `#${n.id}${n.best ? ' ★' : ''}`),
        el('td', 'num', n.step ?? '—'),
        el('td', 'num', n.parents.map((p) => '#' + p).join(', ')),
        el('td', null, n.operator), kind,
        el('td', 'num', n.metric !== null || n.kind === 'buggy' ? metricLabel(n) : '—'),
        el('td', 'num', fmtSecs(n.total_s)),
        el('td', 'num', n.cost_usd ? fmtCost(n.cost_usd) : '—'),
        why,
      );
      frag.appendChild(tr);
    }
    body.textContent = '';
    body.appendChild(frag);
    for (const th of document.querySelectorAll('#node-list th[data-sort]')) {
      const on = th.dataset.sort === state.sort.key;
      th.setAttribute('aria-sort', on ? (state.sort.dir > 0 ? 'ascending' : 'descending') : 'none');
    }
  }

  function sortBy(key) {
    state.sort = { key, dir: state.sort.key === key ? -state.sort.dir : 1 };
    drawList();
    applyClasses();
  }

  // ---- the metric over time ------------------------------------------------------------------

  function chartX(n, t0) {
    if (state.chartX === 'time') {
      const t = Date.parse(n.finished_at || n.created_at);
      return Number.isFinite(t) ? (t - t0) / 1000 : null;
    }
    return n.step;
  }

  function drawChart() {
    const c = $('chart'), pane = $('chart-pane');
    c.textContent = '';
    if (state.tab !== 'chart' || !state.run) return;
    const done = state.nodes.filter((n) => n.step !== null && (n.kind === 'good' || n.kind === 'buggy'));
    const scored = done.filter((n) => n.kind === 'good' && n.metric !== null);
    $('chart-empty').hidden = scored.length > 0;
    const W = Math.max(300, pane.clientWidth - 8), H = Math.max(160, pane.clientHeight - 8);
    c.setAttribute('viewBox', `0 0 ${W} ${H}`);
    c.setAttribute('width', String(W));
    c.setAttribute('height', String(H));
    if (!done.length) return;
    const t0 = Math.min(...state.nodes.map((n) => Date.parse(n.created_at)).filter(Number.isFinite));
    const xs = done.map((n) => chartX(n, t0)).filter((x) => x !== null);
    const L = 56, R = 12, T = 12, B = 44;
    const x0 = Math.min(...xs), x1 = Math.max(...xs, x0 + 1);
    const ms = scored.map((n) => n.metric).sort((a, b) => a - b);
    const lower = lowerIsBetter();
    // The y range: the good metrics between their 5th percentile on the worse side and the
    // best, so one very bad node does not flatten the rest; points beyond it sit on the edge.
    let y0 = ms.length ? ms[lower ? ms.length - 1 - Math.floor((ms.length - 1) * 0.05) : Math.floor((ms.length - 1) * 0.05)] : 0;
    let y1 = ms.length ? (lower ? ms[0] : ms[ms.length - 1]) : 1;
    if (y0 === y1) { y0 -= 0.5; y1 += 0.5; }
    const lo = Math.min(y0, y1), hi = Math.max(y0, y1), padY = (hi - lo) * 0.06;
    const X = (v) => L + ((v - x0) / (x1 - x0)) * (W - L - R);
    const plotB = H - B - 14;  // the band under the plot holds the buggy nodes
    const Y = (v) => {
      const clamped = Math.min(hi + padY, Math.max(lo - padY, v));
      return T + (1 - (clamped - (lo - padY)) / (hi - lo + 2 * padY)) * (plotB - T);
    };
    const axes = svg('g', { class: 'axes' });
    axes.append(svg('line', { x1: L, y1: plotB, x2: W - R, y2: plotB }),
      svg('line', { x1: L, y1: T, x2: L, y2: plotB }));
    for (let i = 0; i <= 4; i++) {
      const v = lo - padY + ((hi - lo + 2 * padY) * i) / 4, y = Y(v);
      axes.append(svg('line', { class: 'grid', x1: L, y1: y, x2: W - R, y2: y }),
        svg('text', { x: L - 6, y: y + 4, 'text-anchor': 'end' }, fmtMetric(v)));
    }
    for (let i = 0; i <= 5; i++) {
      const v = x0 + ((x1 - x0) * i) / 5;
      axes.append(svg('text', { x: X(v), y: H - B + 14, 'text-anchor': 'middle' },
        state.chartX === 'time' ? fmtSecs(v) : String(Math.round(v))));
    }
    axes.append(svg('text', { class: 'axis-title', x: (L + W - R) / 2, y: H - 8, 'text-anchor': 'middle' },
      state.chartX === 'time' ? 'wall time since the run started' : 'step'));
    axes.append(svg('text', { class: 'axis-title', x: L, y: H - B + 2, 'text-anchor': 'start' }, '✗ buggy'));
    c.appendChild(axes);
    // Best so far, as a step line in the task's direction.
    const order = [...scored].filter((n) => chartX(n, t0) !== null)
      .sort((a, b) => chartX(a, t0) - chartX(b, t0));
    let best = null, d = '';
    for (const n of order) {
      if (best === null || (lower ? n.metric < best : n.metric > best)) {
        const x = X(chartX(n, t0));
        d += best === null ? `M${x},${Y(n.metric)}` : ` H${x} V${Y(n.metric)}`;
        best = n.metric;
      }
    }
    if (d) c.appendChild(svg('path', { class: 'best-so-far', d: d + ` H${X(x1)}` }));
    const pts = svg('g', { class: 'points' });
    for (const n of done) {
      const x = chartX(n, t0);
      if (x === null) continue;
      const title = svg('title', {}, `#${n.id} ${n.operator} · ${n.kind}` + (n.metric !== null ? ` · ${fmtMetric(n.metric)}` : ''));
      let p;
      if (n.kind === 'buggy' || n.metric === null) {
        p = svg('text', { class: 'pt buggy', x: X(x), y: H - B - 2, 'text-anchor': 'middle', 'data-node-id': n.id }, '✗');
      } else {
        const col = state.colour.get(n.id);
        p = svg('circle', { class: `pt good${n.best ? ' best' : ''}`, cx: X(x), cy: Y(n.metric), r: n.best ? 6 : 4, 'data-node-id': n.id });
        if (col) p.style.setProperty('--fill', col.fill);
      }
      if (n.id === state.selected) p.classList.add('selected');
      p.appendChild(title);
      pts.appendChild(p);
    }
    c.appendChild(pts);
  }

  function showTab(tab) {
    state.tab = tab;
    $('tab-list').setAttribute('aria-selected', String(tab === 'list'));
    $('tab-chart').setAttribute('aria-selected', String(tab === 'chart'));
    $('list-pane').hidden = tab !== 'list';
    $('chart-pane').hidden = tab !== 'chart';
    $('chart-tools').hidden = tab !== 'chart';
    drawChart();
  }

  // ---- header ------------------------------------------------------------------------------

  function drawHeader() {
    const run = state.run, r = run.run;
    $('run-title').textContent = r.task || '(no task)';
    document.title = `${r.task || 'run'} · Podium viewer`;
    const status = $('run-status');
    // "interrupted (interrupted)" says nothing twice: the reason only when it adds something.
    status.textContent = r.status + (r.stop_reason && r.stop_reason !== r.status ? ` (${r.stop_reason})` : '');
    status.className = 'status s-' + r.status;
    $('node-count').textContent = `${run.nodes.length} node${run.nodes.length === 1 ? '' : 's'}`;
    $('run-dir').textContent = r.dir;
    $('back-to-sweep').hidden = !source.live || !/\/runs\/[^/]+\/$/.test(location.pathname);
    const live = $('live');
    if (run.live && !live) {
      const dot = el('span', 'live', 'live');
      dot.id = 'live';
      dot.title = 'the run is being written: new nodes appear as they come';
      status.after(dot);
    } else if (!run.live && live) live.remove();
    const review = r.review_model && r.review_model !== r.model ? ` (review: ${r.review_model})` : '';
    const stats = [['strategy', r.strategy], ['model', r.model + review], ['steps', fmtInt(r.steps)],
      ['good', fmtInt(r.good_nodes)], ['buggy', fmtInt(r.buggy_nodes)]];
    if (r.discarded_nodes) stats.push(['discarded', fmtInt(r.discarded_nodes)]);
    if (r.best_node !== null) {
      stats.push(['best', `#${r.best_node} · ${fmtMetric(r.best_metric)}${direction(r.lower_is_better)}`]);
    }
    stats.push(['cost', fmtCost(r.cost_usd)],
      ['tokens', `${fmtInt(r.input_tokens)} in / ${fmtInt(r.output_tokens)} out`]);
    if (r.elapsed_s !== null) stats.push(['elapsed', fmtSecs(r.elapsed_s)]);
    const g = r.grade;
    if (g) {
      const parts = [g.score !== null ? 'score ' + fmtMetric(g.score) : 'no score',
        g.medal ? g.medal + ' medal' : g.any_medal ? 'medal' : 'no medal'];
      if (!g.valid_submission) parts.push('invalid submission');
      if (g.leaderboard_percentile !== null) parts.push(`beats ${fmtMetric(g.leaderboard_percentile)}%`);
      stats.push(['grade', parts.join(' · ')]);
    }
    const dl = $('run-stats');
    dl.textContent = '';
    for (const [k, v] of stats) {
      const item = el('div', 'stat' + (k === 'grade' && g.medal ? ' medal-' + g.medal : ''));
      item.append(el('dt', null, k), el('dd', null, v));
      dl.appendChild(item);
    }
    $('goto-best').disabled = r.best_node === null || !state.byId.has(r.best_node);
  }

  function setConnected(ok) {
    $('run-status').classList.toggle('disconnected', !ok);
    const live = $('live');
    if (live) live.textContent = ok ? 'live' : 'live (no answer)';
  }

  // ---- filters -----------------------------------------------------------------------------

  function drawOperatorOptions() {
    const sel = $('filter-operator'), keep = sel.value, ops = state.run.operators;
    if ([...sel.options].slice(1).map((o) => o.value).join('\n') === ops.join('\n')) return;
    while (sel.options.length > 1) sel.remove(1);
    for (const op of ops) sel.appendChild(new Option(op, op));
    sel.value = ops.includes(keep) ? keep : '';
  }

  function passes(n) {
    const op = $('filter-operator').value, st = $('filter-state').value;
    if (op && n.operator !== op) return false;
    if (st === 'best-path' ? !n.on_best_path : st && n.kind !== st) return false;
    return !state.matches || state.matches.has(n.id);
  }

  // The classes that change without a rebuild: filtered-out (dimmed, or hidden with "hide
  // others"), folded (inside a collapsed subtree), selected, cursor.
  function applyClasses() {
    if (!state.run) return;
    const shown = new Set(state.nodes.filter(passes).map((n) => n.id));
    const hide = $('filter-hide').checked;
    $('graph').classList.toggle('hide-filtered', hide);
    document.querySelectorAll('#graph g.node, #node-list tr[data-node-id], #chart .pt').forEach((e) => {
      const id = Number(e.dataset.nodeId);
      e.classList.toggle('filtered-out', !shown.has(id));
      e.classList.toggle('folded', state.hidden.has(id));
      e.classList.toggle('selected', id === state.selected);
      e.classList.toggle('cursor', id === state.cursor);
      if (e.tagName === 'TR') e.hidden = hide && !shown.has(id);
    });
    document.querySelectorAll('#graph path.edge').forEach((e) => {
      const a = Number(e.dataset.from), b = Number(e.dataset.to);
      e.classList.toggle('filtered-out', !shown.has(a) || !shown.has(b));
      e.classList.toggle('folded', state.hidden.has(a) || state.hidden.has(b));
    });
    $('match-count').textContent = `${shown.size} of ${state.nodes.length}`;
  }

  async function runSearch() {
    const q = $('filter-text').value, seq = ++state.searchSeq;
    let matches = null;
    if (q.trim()) {
      try {
        matches = new Set(await source.search(q));
      } catch (e) {
        return;  // the server went away: keep the last result
      }
    }
    if (seq !== state.searchSeq) return;  // a newer search is under way
    state.matches = matches;
    applyClasses();
  }

  // ---- detail panel ------------------------------------------------------------------------

  function kv(dl, pairs) {
    dl.textContent = '';
    for (const [k, v] of pairs) {
      const dd = el('dd');
      if (v instanceof Node) dd.appendChild(v);
      else dd.textContent = v === null || v === undefined ? '—' : String(v);
      dl.append(el('dt', null, k), dd);
    }
  }

  function nodeLinks(ids) {
    const span = el('span', 'links', ids.length ? undefined : '—');
    for (const id of ids) {
      const b = el('button', 'link', '#' + id);
      b.type = 'button';
      b.dataset.goto = String(id);
      span.appendChild(b);
    }
    return span;
  }

  // Text in a <pre>; a long one folded in a <details> whose summary is its first line.
  function folded(text) {
    const pre = el('pre', 'wrap', text || ''), lines = pre.textContent.split('\n').length;
    if (pre.textContent.length <= FOLD_CHARS && lines <= FOLD_LINES) return pre;
    const det = el('details', 'fold');
    const first = pre.textContent.trimStart().split('\n')[0].slice(0, 120);
    det.append(el('summary', null,
      `${first} … (${fmtInt(pre.textContent.length)} chars, ${fmtInt(lines)} lines)`), pre);
    return det;
  }

  function drawCall(c) {
    const det = el('details', 'call'), r = c.response;
    det.open = true;
    det.dataset.role = c.role;
    const bits = [`${c.role} call`, `seq ${c.seq}`, c.model];
    if (r) {
      bits.push(`${fmtInt(r.input_tokens)} in / ${fmtInt(r.output_tokens)} out`,
        fmtCost(r.cost_usd), fmtSecs(r.latency_s), r.finish, r.replayed && 'replayed');
    }
    if (c.attempts > 1) bits.push(`${c.attempts} attempts`);
    if (c.error) bits.push(c.fatal ? 'fatal error' : 'error');
    det.appendChild(el('summary', null, bits.filter(Boolean).join(' · ')));
    for (const m of c.messages) {
      const msg = el('div', 'message');
      msg.dataset.role = m.role;
      msg.append(el('div', 'role', m.role), folded(m.content));
      det.appendChild(msg);
    }
    if (c.tools && c.tools.length) det.appendChild(el('p', 'dim', 'tools offered: ' + c.tools.join(', ')));
    if (c.error) det.appendChild(el('div', 'call-error', c.error));
    const resp = el('div', 'response');
    resp.appendChild(el('div', 'role', r ? 'response' + (r.replayed ? ' (replayed)' : '') : 'no response'));
    if (r && r.text) resp.appendChild(folded(r.text));
    if (r && r.tool_call) {
      resp.append(el('div', 'tool', `→ ${r.tool_call.name}(…)`),
        folded(JSON.stringify(r.tool_call.arguments, null, 2)));
    }
    det.appendChild(resp);
    return det;
  }

  // One frame of a parsed traceback: where, and the lines around the one that failed.
  function drawFrame(f) {
    const box = el('div', 'frame' + (f.in_solution ? ' solution' : ' library'));
    const where = f.file + (f.line !== null && f.line !== undefined ? `, line ${f.line}` : '')
      + (f.function ? `, in ${f.function}` : '');
    box.appendChild(el('div', 'where', where));
    if (f.context && f.context.length) box.appendChild(el('pre', 'ctx wrap', f.context.join('\n')));
    else if (f.code_line) box.appendChild(el('pre', 'ctx wrap', f.code_line));
    return box;
  }

  function libraryNames(frames) {
    const names = new Set();
    for (const f of frames) {
      const m = /(?:site|dist)-packages\/([^/]+)/.exec(f.file) || /\/lib\/python[\d.]+\/([^/]+)/.exec(f.file);
      names.add(m ? m[1].replace(/\.py$/, '') : f.file.split('/').pop());
    }
    return [...names].slice(0, 6).join(', ');
  }

  // A traceback as the solution's author wants it: the error once, the solution's own frames
  // first with their code, the library frames folded (in call order inside the fold).
  function drawTraceback(box, tb) {
    const mine = tb.frames.filter((f) => f.in_solution), lib = tb.frames.filter((f) => !f.in_solution);
    const frames = el('div', 'frames');
    for (const f of mine) frames.appendChild(drawFrame(f));
    if (!mine.length && tb.frames.length) frames.appendChild(el('p', 'dim', 'no frame in solution.py'));
    if (lib.length) {
      const det = el('details', 'lib-frames');
      det.appendChild(el('summary', null, `${lib.length} library frame${lib.length === 1 ? '' : 's'} (${libraryNames(lib)})`));
      for (const f of lib) det.appendChild(drawFrame(f));
      frames.appendChild(det);
    }
    if (tb.dropped) frames.appendChild(el('p', 'dim', `(${tb.dropped} more frames not shown)`));
    box.appendChild(frames);
    for (const cause of tb.causes || []) {
      const det = el('details', 'cause');
      const how = cause.link === 'cause' ? 'caused by' : 'raised while handling';
      det.appendChild(el('summary', null, `${how}: ${(cause.error || '').split('\n')[0]}`));
      drawTraceback(det, cause);
      box.appendChild(det);
    }
  }

  function drawError(ex) {
    const box = $('detail-error');
    box.textContent = '';
    const has = ex && (ex.error_name || ex.error_value || ex.traceback || ex.killed_reason || ex.timed_out);
    $('sec-error').hidden = !has;
    if (!has) return;
    const tb = ex.traceback_parsed;
    const line = (tb && tb.error) || [ex.error_name, ex.error_value].filter(Boolean).join(': ');
    if (line) box.appendChild(el('p', 'errline', line));
    if (ex.killed_reason) box.appendChild(el('p', 'errline', 'killed: ' + ex.killed_reason));
    else if (ex.timed_out) box.appendChild(el('p', 'errline', 'timed out'));
    if (tb && tb.frames && tb.frames.length) drawTraceback(box, tb);
    else if (ex.traceback && ex.traceback.trim() !== line.trim()) box.appendChild(el('pre', 'wrap', ex.traceback));
  }

  // ---- an agentic node's notebook --------------------------------------------------------------

  // Its cells in order with their output and error, the model's words between them (as text:
  // never rendered as markdown or HTML), and above each turn's entries the model call that
  // asked for them: tokens, cost and time. Every string here is agent-written: textContent only.
  function drawNotebook(d) {
    const box = $('detail-notebook'), meta = $('notebook-meta'), nb = d && d.notebook;
    box.textContent = '';
    meta.textContent = '';
    $('sec-notebook').hidden = !nb;
    if (!nb) return;
    if (nb.problem) { box.appendChild(el('p', 'nb-problem', nb.problem)); return; }
    meta.textContent = notebookSummary(nb);
    let turn;
    for (const cell of nb.cells) {
      if (cell.turn !== turn && cell.turn !== null) box.appendChild(turnLine(cell));
      turn = cell.turn;
      box.appendChild(cell.type === 'code' ? drawCell(cell) : drawWords(cell));
    }
    if (nb.cells_left_out) box.appendChild(el('p', 'dim', `(${fmtInt(nb.cells_left_out)} more cells not shown)`));
  }

  function notebookSummary(nb) {
    const cells = nb.cells.filter((c) => c.type === 'code').length;
    const ended = nb.finished ? 'finished' : nb.ending ? `ended: ${nb.ending}` : 'not finished';
    return [`${cells} cell${cells === 1 ? '' : 's'}`,
      nb.turns !== null && nb.turns !== undefined && `${nb.turns} turn${nb.turns === 1 ? '' : 's'}`,
      ended].filter(Boolean).join(' · ');
  }

  // A turn's model call in one line (the full call is under Model calls, by its number).
  function turnLine(cell) {
    const c = cell.call, line = el('div', 'nb-turn');
    line.dataset.turn = String(cell.turn);
    line.textContent = [`turn ${cell.turn}`, ...(c ? [`code call #${c.seq}`,
      `${fmtInt(c.input_tokens)} in / ${fmtInt(c.output_tokens)} out tokens`, fmtCost(c.cost_usd),
      fmtSecs(c.latency_s)] : ['no model call recorded'])].join(' · ');
    return line;
  }

  function drawWords(cell) {
    const box = el('div', 'nb-words');
    box.dataset.turn = String(cell.turn);
    box.append(el('div', 'role', 'model'), el('div', 'text', cell.source));
    return box;
  }

  function drawCell(cell) {
    const box = el('div', 'nb-cell');
    box.dataset.cell = String(cell.number === null ? '' : cell.number);
    box.dataset.status = cell.status || '';
    const head = [`[cell ${cell.number === null ? '?' : cell.number}]`, cell.status || 'no status',
      cell.duration_s !== null && fmtSecs(cell.duration_s)].filter(Boolean).join(' · ');
    box.append(el('div', 'nb-head', head), el('pre', 'nb-code wrap', cell.source));
    if (cell.output) box.appendChild(el('pre', 'nb-output wrap', cell.output));
    if (cell.error) box.appendChild(drawCellError(cell.error));
    return box;
  }

  function drawCellError(er) {
    const box = el('div', 'nb-error'), tb = er.traceback_parsed;
    const line = (tb && tb.error) || [er.name, er.value].filter(Boolean).join(': ');
    if (line) box.appendChild(el('p', 'errline', line));
    if (tb && tb.frames && tb.frames.length) drawTraceback(box, tb);
    else if (er.traceback && er.traceback.trim() !== line.trim()) box.appendChild(el('pre', 'wrap', er.traceback));
    return box;
  }

  // ---- code, and its diff against a parent ---------------------------------------------------

  function drawCodeViews(n, d) {
    const seg = $('code-views');
    seg.textContent = '';
    const views = [['code', 'code']];
    const diffs = (d && d.diffs) || [];
    diffs.forEach((df, i) => {
      const tag = diffs.length > 1 ? ` #${df.parent}` : ` #${df.parent}`;
      views.push([`unified:${i}`, `diff vs${tag} (+${df.added} −${df.removed})`], [`split:${i}`, 'side by side']);
    });
    if (!diffs.length && isDiffable(n)) views.push(['none', 'no diff: parent not found']);
    for (const [key, label] of views) {
      const b = el('button', 'seg-btn', label);
      b.type = 'button';
      b.dataset.view = key;
      b.disabled = key === 'none';
      b.setAttribute('aria-pressed', String(key === currentViewKey()));
      seg.appendChild(b);
    }
  }

  const currentViewKey = () => (state.codeView === 'code' ? 'code' : `${state.codeView}:${state.diffParent}`);

  function setCodeView(key) {
    const [view, idx] = key.split(':');
    state.codeView = view;
    state.diffParent = Number(idx || 0);
    drawCode();
  }

  // d: code -> unified -> side by side -> (the next parent's) ... -> code
  function cycleCodeView() {
    const d = state.detail, diffs = (d && d.diffs) || [];
    if (!diffs.length) return;
    const keys = ['code'];
    diffs.forEach((_, i) => keys.push(`unified:${i}`, `split:${i}`));
    setCodeView(keys[(keys.indexOf(currentViewKey()) + 1) % keys.length]);
  }

  function drawCode() {
    const d = state.detail, n = state.byId.get(state.selected);
    if (!n) return;
    const code = $('detail-code'), diffBox = $('detail-diff');
    const diffs = (d && d.diffs) || [], df = diffs[state.diffParent];
    if (state.codeView !== 'code' && !df) state.codeView = 'code';
    drawCodeViews(n, d);
    const showCode = state.codeView === 'code';
    code.hidden = !showCode;
    diffBox.hidden = showCode;
    const wrap = $('code-wrap').checked;
    code.classList.toggle('wrap', wrap);
    diffBox.classList.toggle('wrap', wrap);
    if (showCode) {
      const inner = code.firstElementChild;
      const none = n.kind === 'running' ? '(not written yet)' : '(not available)';
      if (d && d.code_html) inner.innerHTML = d.code_html;  // pygments' output: escaped, spans only
      else inner.textContent = d ? '(no code yet)' : none;
      return;
    }
    diffBox.textContent = '';
    diffBox.appendChild(state.codeView === 'split' ? splitDiff(df) : unifiedDiff(df));
  }

  function diffCell(cls, text) { return el('td', cls, text === null || text === undefined ? '' : text); }

  function unifiedDiff(df) {
    const table = el('table', 'diff unified');
    table.dataset.parent = String(df.parent);
    if (!df.hunks.length) {
      const tr = el('tr');
      tr.appendChild(el('td', 'same', 'the code is the same as the parent\'s'));
      table.appendChild(tr);
    }
    for (const h of df.hunks) {
      const head = el('tr', 'hunk');
      head.appendChild(el('td', null, h.header)).colSpan = 3;
      table.appendChild(head);
      for (const ln of h.lines) {
        const tr = el('tr', ln.tag === '+' ? 'add' : ln.tag === '-' ? 'del' : 'ctx');
        tr.append(diffCell('no', ln.old), diffCell('no', ln.new), diffCell('code', `${ln.tag} ${ln.text}`));
        table.appendChild(tr);
      }
    }
    if (df.cut) table.appendChild(el('caption', 'dim', df.cut));
    return table;
  }

  // Side by side: within each hunk, a run of removed lines faces the run of added lines after it.
  function splitDiff(df) {
    const table = el('table', 'diff split');
    table.dataset.parent = String(df.parent);
    for (const h of df.hunks) {
      const head = el('tr', 'hunk');
      head.appendChild(el('td', null, h.header)).colSpan = 4;
      table.appendChild(head);
      let dels = [], adds = [];
      const flush = () => {
        for (let i = 0; i < Math.max(dels.length, adds.length); i++) {
          const a = dels[i], b = adds[i], tr = el('tr', 'pair');
          tr.append(diffCell('no', a && a.old), diffCell(a ? 'code del' : 'code empty', a && a.text),
            diffCell('no', b && b.new), diffCell(b ? 'code add' : 'code empty', b && b.text));
          table.appendChild(tr);
        }
        dels = []; adds = [];
      };
      for (const ln of h.lines) {
        if (ln.tag === '-') { if (adds.length) flush(); dels.push(ln); } else if (ln.tag === '+') adds.push(ln);
        else {
          flush();
          const tr = el('tr', 'ctx');
          tr.append(diffCell('no', ln.old), diffCell('code', ln.text), diffCell('no', ln.new), diffCell('code', ln.text));
          table.appendChild(tr);
        }
      }
      flush();
    }
    if (df.cut) table.appendChild(el('caption', 'dim', df.cut));
    return table;
  }

  // ---- a node in full ----------------------------------------------------------------------

  function reviewText(n, d) {
    if (!d) return n.kind === 'running' ? '(not written yet)' : '(not available)';
    if (d.summary) return d.summary;
    if (n.kind === 'running') return '(not reviewed yet)';
    if (n.kind === 'interrupted') return '(interrupted before its review)';
    if (!(d.calls || []).some((c) => c.role === 'review')) {
      return '(no review model was asked: the node is judged by its metric line and the hard checks)';
    }
    return '(the review gave no summary)';
  }

  function drawOutput(n, d) {
    const out = $('detail-output'), note = $('output-note');
    const none = n.kind === 'running' ? '(not written yet)' : '(not available)';
    out.textContent = d ? d.output || (n.kind === 'running' ? '(no output yet)' : '(no output)') : none;
    out.classList.toggle('dim', !d || !d.output);
    $('output-live').hidden = !(d && d.output_live && n.kind === 'running');
    note.hidden = !(d && d.output_traceback_cut);
    note.textContent = '(its traceback is shown once, under Error)';
    if (d && d.output_live && n.kind === 'running') followOutput(n.id);
  }

  // While the open node runs, its output file is asked for every second (live pages only).
  function followOutput(id) {
    clearTimeout(state.outputTimer);
    if (!source.live) return;
    let last = null;
    const tick = async () => {
      const n = state.byId.get(id);
      if (state.selected !== id || !n || n.kind !== 'running') return;
      try {
        const o = await source.output(id);
        if (o && o.version !== last && state.selected === id) {
          last = o.version;
          const out = $('detail-output'), atEnd = out.scrollTop + out.clientHeight >= out.scrollHeight - 4;
          out.textContent = o.output || '(no output yet)';
          out.classList.toggle('dim', !o.output);
          if (atEnd) out.scrollTop = out.scrollHeight;  // tail -f, unless the reader scrolled up
        }
      } catch (e) { /* the server went away: try again */ }
      state.outputTimer = setTimeout(tick, OUTPUT_POLL_MS);
    };
    state.outputTimer = setTimeout(tick, OUTPUT_POLL_MS);
  }

  // n: the LightNode; d: its NodeDetail, or null when it could not be had.
  function drawDetail(n, d) {
    state.detail = d;
    $('detail').dataset.nodeId = String(n.id);
    $('detail-empty').hidden = true;
    $('detail-body').hidden = false;
    const title = $('detail-title');
    title.textContent = `Node #${n.id} · ${n.operator} `;
    title.appendChild(el('span', 'badge ' + n.kind, n.kind));
    if (n.best) title.appendChild(el('span', 'final', '★ final node'));
    else if (n.on_best_path) title.appendChild(el('span', 'onpath', 'on best path'));
    kv($('detail-meta'), [
      ['operator', n.operator], ['parents', nodeLinks(n.parents)],
      ['children', nodeLinks(d ? d.children : state.children.get(n.id) || [])],
      ['step', n.step], ['state', n.state], ['worker', n.worker],
      ['created', fmtTime(n.created_at)], ['finished', fmtTime(n.finished_at)],
      ['submission', d ? (d.has_submission ? 'yes' : 'no') : null],
      ...(d && d.fresh ? [['fresh kernel', d.fresh]] : []),
    ]);
    $('detail-metric').textContent = n.metric !== null
      ? `metric ${fmtMetric(n.metric)}${direction(state.run.run.lower_is_better)}${n.kind === 'buggy' ? ' — but the node is buggy' : ''}`
      : n.kind === 'buggy' ? 'no metric: buggy'
        : n.kind === 'running' ? `no metric yet (${n.state})` : 'no metric';
    const bug = $('detail-bug');
    bug.textContent = n.bug_reason ? 'Bug: ' + n.bug_reason : '';
    bug.hidden = !n.bug_reason;
    $('detail-summary').textContent = reviewText(n, d);
    const none = n.kind === 'running' ? '(not written yet)' : '(not available)';
    $('detail-plan').textContent = d ? d.plan || '(no plan)' : none;
    drawNotebook(d);
    drawCode();
    drawOutput(n, d);
    const ex = d && d.exec;
    drawError(ex);
    $('detail-exec').textContent = ex ? [`exec ${ex.status}`, fmtSecs(ex.duration_s),
      ex.peak_memory_bytes !== null && 'peak memory ' + fmtBytes(ex.peak_memory_bytes),
      ex.output_bytes && `output ${fmtBytes(ex.output_bytes)}${ex.output_truncated ? ' (truncated)' : ''}`,
    ].filter(Boolean).join(' · ') : '';
    const u = d && d.usage, t = d && d.timings;
    kv($('detail-usage'), u ? [['input tokens', fmtInt(u.input_tokens)],
      ['output tokens', fmtInt(u.output_tokens)], ['cost', fmtCost(u.cost_usd)],
      ['model calls', u.calls]] : [['cost', fmtCost(n.cost_usd)]]);
    kv($('detail-timings'), t ? [['model', fmtSecs(t.model_s)],
      ['kernel start', fmtSecs(t.kernel_start_s)], ['execution', fmtSecs(t.exec_s)],
      ['review model', fmtSecs(t.review_model_s)], ['overhead', fmtSecs(t.overhead_s)],
      ['total', fmtSecs(t.total_s)]] : [['total', fmtSecs(n.total_s)]]);
    const calls = $('detail-calls');
    calls.textContent = '';
    if (d && d.calls.length) calls.append(...d.calls.map(drawCall));
    else calls.appendChild(el('p', 'dim', d ? '(no model calls recorded)' : none));
    drawCollapseButton();
  }

  async function openNode(id, opts = {}) {
    const changed = state.selected !== id;
    state.selected = id;
    state.cursor = id;
    if (changed) { state.codeView = 'code'; state.diffParent = 0; }
    if (location.hash !== `#node=${id}`) location.hash = `node=${id}`;
    applyClasses();
    const n = state.byId.get(id);
    if (!n) {
      $('detail').dataset.nodeId = String(id);
      $('detail-body').hidden = true;
      $('detail-empty').hidden = false;
      $('detail-empty').textContent = `This run has no node #${id}.`;
      return;
    }
    if (state.hidden.has(id)) revealNode(id);
    if (opts.scroll) scrollToNode(id);
    drawTags();
    let d = null;
    try {
      d = await source.node(id);
    } catch (e) {
      d = null;  // the server went away: show what the graph knows
    }
    if (state.selected !== id) return;  // another node was opened meanwhile
    state.shownSig = signature(n);
    const panel = $('detail'), top = panel.scrollTop;
    drawDetail(n, d);
    panel.scrollTop = opts.keepScroll ? top : 0;
    if (!opts.keepScroll && narrow.matches) panel.scrollIntoView();  // one column: go to it
    if (state.tab === 'chart') drawChart();
  }

  // Expand every collapsed ancestor of a node about to be opened.
  function revealNode(id) {
    for (const c of [...state.collapsed]) if (descendants(c).has(id)) state.collapsed.delete(c);
    computeHidden();
    buildGraph();
    placeNodes();
  }

  function closeDetail() {
    state.selected = null;
    state.detail = null;
    clearTimeout(state.outputTimer);
    delete $('detail').dataset.nodeId;
    $('detail-body').hidden = true;
    $('detail-empty').hidden = false;
    history.replaceState(null, '', location.pathname + location.search);
    applyClasses();
    drawTags();
  }

  function hashNode() {
    const m = /^#node=(\d+)$/.exec(location.hash);
    return m ? Number(m[1]) : null;
  }

  // ---- keyboard ----------------------------------------------------------------------------

  // The visible rows in the list's order: what j / k walk.
  function rowOrder() {
    return [...document.querySelectorAll('#node-list tbody tr[data-node-id]')]
      .filter((tr) => !tr.hidden).map((tr) => Number(tr.dataset.nodeId));
  }

  function moveCursor(step) {
    const order = rowOrder();
    if (!order.length) return;
    const at = order.indexOf(state.cursor ?? state.selected);
    state.cursor = order[at < 0 ? (step > 0 ? 0 : order.length - 1)
      : Math.min(order.length - 1, Math.max(0, at + step))];
    applyClasses();
    scrollToNode(state.cursor);
    drawTags();
  }

  function onKey(e) {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const t = e.target;
    if (t && (t.tagName === 'INPUT' || t.tagName === 'SELECT' || t.tagName === 'TEXTAREA')) {
      if (e.key === 'Escape') t.blur();
      return;
    }
    const actions = {
      j: () => moveCursor(1), k: () => moveCursor(-1),
      Enter: () => state.cursor !== null && openNode(state.cursor, { scroll: true }),
      d: cycleCodeView,
      p: () => {
        const n = state.byId.get(state.selected);
        if (n && n.parents.length) openNode(n.tree_parent ?? n.parents[0], { scroll: true });
      },
      c: () => state.selected !== null && toggleCollapse(state.selected),
      b: () => $('goto-best').click(),
      f: fit, '+': () => zoomBy(1.25), '=': () => zoomBy(1.25), '-': () => zoomBy(0.8),
      '/': () => $('filter-text').focus(),
      '?': () => { $('help').hidden = !$('help').hidden; },
      Escape: () => { if (!$('help').hidden) $('help').hidden = true; else closeDetail(); },
    };
    const act = actions[e.key];
    if (act) { e.preventDefault(); act(); }
  }

  // ---- polling: the run, again and again while it is live -----------------------------------

  function indexRun(run) {
    state.run = run;
    state.nodes = run.nodes;
    state.byId = new Map(run.nodes.map((n) => [n.id, n]));
    state.children = new Map();
    for (const n of run.nodes) {
      for (const p of n.parents) (state.children.get(p) || state.children.set(p, []).get(p)).push(n.id);
    }
    for (const id of [...state.collapsed]) if (!state.byId.has(id)) state.collapsed.delete(id);
    computeHidden();
  }

  async function applyRun(run) {
    indexRun(run);
    drawLegend(colourScale());
    drawHeader();
    drawOperatorOptions();
    buildGraph();
    if (!state.fitted) fit(); else redrawView();
    placeNodes();
    drawMinimap();
    drawTags();
    drawList();
    drawChart();
    if (state.matches) await runSearch();  // new nodes may match the text filter
    applyClasses();
    if (!state.started) {
      state.started = true;
      window.performance.mark('podium:graph-drawn');
      const id = hashNode();
      if (id !== null) openNode(id, { scroll: true });
    } else if (state.selected !== null && state.byId.has(state.selected)
        && signature(state.byId.get(state.selected)) !== state.shownSig) {
      openNode(state.selected, { keepScroll: true });  // the open node changed: show it anew
    }
  }

  async function poll() {
    let run = null, ok = true;
    try {
      run = await source.run();
    } catch (e) {
      ok = false;  // the server is gone (or restarting): ask again, less often
    }
    setConnected(ok);
    if (run) await applyRun(run);
    if (source.live) setTimeout(poll, ok && state.run && state.run.live ? POLL_LIVE_MS : POLL_IDLE_MS);
  }

  // ---- wiring ------------------------------------------------------------------------------

  function wireGraph() {
    const pane = $('graph-pane'), graph = $('graph');
    let drag = null;
    graph.addEventListener('pointerdown', (e) => {
      if (e.button !== 0 || e.target.closest('g.node, g.tag')) return;
      drag = { x: e.clientX, y: e.clientY, moved: false };
      graph.setPointerCapture(e.pointerId);
    });
    graph.addEventListener('pointermove', (e) => {
      if (!drag) return;
      const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
      if (Math.abs(dx) + Math.abs(dy) > 2) drag.moved = true;
      drag.x = e.clientX;
      drag.y = e.clientY;
      panBy(dx, dy);
    });
    const end = () => { if (drag && drag.moved) placeNodes(); drag = null; };
    graph.addEventListener('pointerup', end);
    graph.addEventListener('pointercancel', end);
    graph.addEventListener('click', (e) => {
      const hit = e.target.closest('g.node, g.tag');
      if (!hit) return;
      const id = Number(hit.dataset.nodeId);
      if (e.target.classList.contains('fold')) toggleCollapse(id);
      else openNode(id);
    });
    graph.addEventListener('dblclick', (e) => {
      const hit = e.target.closest('g.node');
      if (hit) toggleCollapse(Number(hit.dataset.nodeId));
    });
    pane.addEventListener('wheel', (e) => {
      e.preventDefault();
      const box = pane.getBoundingClientRect();
      if (e.ctrlKey || e.metaKey) zoomBy(Math.exp(-e.deltaY / 300), e.clientX - box.left, e.clientY - box.top);
      else panBy(-(e.shiftKey ? e.deltaY : e.deltaX), e.shiftKey ? 0 : -e.deltaY);
    }, { passive: false });
    const mini = $('minimap');
    let miniDrag = false;
    mini.addEventListener('pointerdown', (e) => { miniDrag = true; mini.setPointerCapture(e.pointerId); minimapGoto(e); });
    mini.addEventListener('pointermove', (e) => { if (miniDrag) minimapGoto(e); });
    mini.addEventListener('pointerup', () => { miniDrag = false; });
    new ResizeObserver(() => { if (state.run) { redrawView(); drawChart(); } }).observe(pane);
  }

  function main() {
    wireGraph();
    $('node-list').addEventListener('click', (e) => {
      const th = e.target.closest('th[data-sort]');
      if (th) { sortBy(th.dataset.sort); return; }
      const hit = e.target.closest('tr[data-node-id]');
      if (hit) openNode(Number(hit.dataset.nodeId), { scroll: true });
    });
    $('chart').addEventListener('click', (e) => {
      const hit = e.target.closest('[data-node-id]');
      if (hit) openNode(Number(hit.dataset.nodeId), { scroll: true });
    });
    $('tab-list').addEventListener('click', () => showTab('list'));
    $('tab-chart').addEventListener('click', () => showTab('chart'));
    for (const r of document.querySelectorAll('input[name="chart-x"]')) {
      r.addEventListener('change', () => { state.chartX = r.value; drawChart(); });
    }
    $('detail').addEventListener('click', (e) => {
      const b = e.target.closest('button[data-goto]');
      if (b) openNode(Number(b.dataset.goto), { scroll: true });
      const v = e.target.closest('button[data-view]');
      if (v && !v.disabled) setCodeView(v.dataset.view);
    });
    $('code-wrap').addEventListener('change', drawCode);
    $('detail-close').addEventListener('click', closeDetail);
    $('detail-collapse').addEventListener('click', () => state.selected !== null && toggleCollapse(state.selected));
    $('goto-best').addEventListener('click', () => {
      const best = state.run && state.run.run.best_node;
      if (best !== null && best !== undefined) openNode(best, { scroll: true });
    });
    $('filter-operator').addEventListener('change', applyClasses);
    $('filter-state').addEventListener('change', applyClasses);
    $('filter-hide').addEventListener('change', applyClasses);
    let timer = null;
    $('filter-text').addEventListener('input', () => {
      clearTimeout(timer);
      timer = setTimeout(runSearch, SEARCH_DEBOUNCE_MS);
    });
    $('zoom-in').addEventListener('click', () => zoomBy(1.25));
    $('zoom-out').addEventListener('click', () => zoomBy(0.8));
    $('zoom-reset').addEventListener('click', () => setZoom(1));
    $('zoom-fit').addEventListener('click', fit);
    $('help-toggle').addEventListener('click', () => { $('help').hidden = !$('help').hidden; });
    document.addEventListener('keydown', onKey);
    window.addEventListener('hashchange', () => {
      const id = hashNode();
      if (id !== null && id !== state.selected && state.run) openNode(id, { scroll: true });
    });
    poll();
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', main);
  else main();
})();
