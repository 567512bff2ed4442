// Podium run viewer: one agent run's search graph, its nodes in full, and live updates.
// Plain ES2020, no dependencies, nothing from the network. Every string that comes from the
// run is set as text (textContent); the one HTML string inserted is code_html, pygments'
// already-escaped highlighting. No eval, no inline handlers: the page's CSP forbids them.
'use strict';

(() => {
  const NODE_W = 104, NODE_H = 40, GAP_X = 120, GAP_Y = 84, MARGIN = 28;
  const POLL_LIVE_MS = 1000, POLL_IDLE_MS = 5000, SEARCH_DEBOUNCE_MS = 250;
  const FOLD_CHARS = 1500, FOLD_LINES = 30;  // longer prompts and answers start folded
  const SVG_NS = 'http://www.w3.org/2000/svg';
  const $ = (id) => document.getElementById(id);
  const narrow = window.matchMedia('(max-width: 900px)');  // style.css: one column

  const state = {
    run: null,            // RunJSON as last received
    byId: new Map(),      // id -> LightNode
    children: new Map(),  // id -> [child ids]
    pos: new Map(),       // id -> {x, y}: node centres, in graph units
    size: { w: 0, h: 0 },
    zoom: 1,
    selected: null,       // the open node's id
    shownSig: null,       // the open node's signature when its detail was drawn
    matches: null,        // ids matching the text filter; null when there is none
    searchSeq: 0,
    started: false,
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
  const direction = (lower) => (lower === null || lower === undefined ? ''
    : lower ? ' (lower is better)' : ' (higher is better)');
  function metricLabel(n) {
    if (n.kind === 'buggy') return '✗';
    if (n.metric !== null) return fmtMetric(n.metric);
    return n.kind === 'running' ? n.state : n.kind;
  }
  // What makes the open node's detail stale in live mode.
  const signature = (n) => [n.state, n.kind, n.metric, n.best, n.on_best_path, n.finished_at]
    .join('|');

  // ---- data source: the live server, or the data embedded in an exported file ---------------

  // The fields /api/search looks in: export mode searches the same ones locally.
  const searched = (d) => [d.plan, d.code, d.output, d.bug_reason, d.summary,
    d.exec && d.exec.error_name, d.exec && d.exec.error_value, d.exec && d.exec.traceback];

  function exportSource(data) {
    const details = data.details || {};
    return {
      live: false,
      run: async () => data.run,
      node: async (id) => details[String(id)] || null,
      search: async (q) => {
        const needle = q.toLowerCase();
        return data.run.nodes.map((n) => n.id).filter((id) => searched(details[String(id)]
          || state.byId.get(id) || {}).some((t) => typeof t === 'string'
          && t.toLowerCase().includes(needle)));
      },
    };
  }

  function liveSource() {
    let etag = null;
    const cache = new Map();  // id -> {sig, detail}: refetched when the node changes
    return {
      live: true,
      async run() {
        const headers = etag ? { 'If-None-Match': etag } : {};
        const r = await fetch('/api/run', { headers, cache: 'no-store' });
        if (r.status === 304) return null;  // nothing new
        if (!r.ok) throw new Error(`GET /api/run answered ${r.status}`);
        const data = await r.json();
        etag = r.headers.get('ETag');
        return data;
      },
      async node(id) {
        const light = state.byId.get(id), sig = light ? signature(light) : '';
        const hit = cache.get(id);
        if (hit && hit.sig === sig) return hit.detail;
        const r = await fetch(`/api/node/${id}`, { cache: 'no-store' });
        if (!r.ok) return null;
        const detail = await r.json();
        cache.set(id, { sig, detail });
        return detail;
      },
      async search(q) {
        const r = await fetch('/api/search?q=' + encodeURIComponent(q), { cache: 'no-store' });
        if (!r.ok) throw new Error(`GET /api/search answered ${r.status}`);
        return (await r.json()).ids;
      },
    };
  }

  const embedded = $('podium-data');
  const source = embedded ? exportSource(JSON.parse(embedded.textContent)) : liveSource();

  // ---- layout: a layered DAG (depth = 1 + deepest parent), children kept near parents -------

  // Places a layer's nodes (in order) as near their wanted x as a minimum gap allows: least
  // squares under the order constraint (pool adjacent violators on want(id_i) - i * GAP_X).
  function placeLayer(layer, want, x) {
    const blocks = [];
    layer.forEach((id, i) => {
      let b = { sum: want(id) - i * GAP_X, n: 1 };
      const mean = (blk) => blk.sum / blk.n;
      while (blocks.length && mean(blocks[blocks.length - 1]) > mean(b)) {
        const a = blocks.pop();
        b = { sum: a.sum + b.sum, n: a.n + b.n };
      }
      blocks.push(b);
    });
    let i = 0;
    for (const b of blocks) {
      for (let k = 0; k < b.n; k++, i++) x.set(layer[i], b.sum / b.n + i * GAP_X);
    }
  }

  function layout(nodes) {
    const byId = state.byId, depth = new Map(), children = new Map();
    const depthOf = (id, seen) => {
      if (depth.has(id)) return depth.get(id);
      let d = 0;
      if (!seen.has(id)) {
        seen.add(id);
        for (const p of byId.get(id).parents) if (byId.has(p)) d = Math.max(d, depthOf(p, seen) + 1);
      }
      depth.set(id, d);
      return d;
    };
    const layers = [];
    for (const n of nodes) {
      (layers[depthOf(n.id, new Set())] ||= []).push(n.id);
      for (const p of n.parents) (children.get(p) || children.set(p, []).get(p)).push(n.id);
    }
    state.children = children;
    const x = new Map();
    const mean = (ids, fallback) => {
      const xs = ids.filter((i) => x.has(i)).map((i) => x.get(i));
      return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : fallback;
    };
    const place = (layer, want) => {
      layer.sort((a, b) => want(a) - want(b) || (x.get(a) ?? a) - (x.get(b) ?? b));
      placeLayer(layer, want, x);
    };
    // Down (children under the barycentre of their parents), up (parents over their
    // children), down again.
    const down = () => layers.forEach((layer, d) => d > 0
      && place(layer, (id) => mean(byId.get(id).parents, x.get(id) ?? 0)));
    layers[0].forEach((id, i) => x.set(id, i * GAP_X));
    down();
    for (let d = layers.length - 2; d >= 0; d--) {
      place(layers[d], (id) => mean(children.get(id) || [], x.get(id)));
    }
    down();
    const minX = Math.min(...x.values());
    let maxX = 0;
    state.pos = new Map();
    for (const [id, v] of x) {
      const px = v - minX + MARGIN + NODE_W / 2;
      maxX = Math.max(maxX, px);
      state.pos.set(id, { x: px, y: MARGIN + 8 + NODE_H / 2 + depth.get(id) * GAP_Y });
    }
    state.size = { w: maxX + NODE_W / 2 + MARGIN,
      h: 2 * MARGIN + 8 + NODE_H + (layers.length - 1) * GAP_Y };
  }

  // ---- drawing: the graph (SVG) and the node list ------------------------------------------

  function tooltip(n) {
    const lines = [`#${n.id} ${n.operator} · ${n.kind}${n.best ? ' · final node ★' : ''}`];
    if (n.parents.length) lines.push('parents: ' + n.parents.map((p) => '#' + p).join(', '));
    if (n.metric !== null) lines.push('metric ' + fmtMetric(n.metric));
    if (n.bug_reason) lines.push('bug: ' + n.bug_reason);
    if (n.kind === 'running') lines.push('state: ' + n.state);
    return lines.join('\n');
  }

  function drawGraph() {
    const g = $('graph'), nodes = state.run.nodes;
    g.textContent = '';
    $('graph-empty').hidden = nodes.length > 0;
    if (!nodes.length) return;
    layout(nodes);
    g.setAttribute('viewBox', `0 0 ${state.size.w} ${state.size.h}`);
    setZoom(state.zoom);
    const edges = svg('g', { class: 'edges' }), drawn = svg('g', { class: 'nodes' });
    const onPath = [];  // drawn last, over the others
    for (const n of nodes) {
      const b = state.pos.get(n.id);
      for (const p of n.parents.filter((id) => state.pos.has(id))) {
        const a = state.pos.get(p), y1 = a.y + NODE_H / 2, y2 = b.y - NODE_H / 2;
        const my = (y1 + y2) / 2, best = n.on_best_path && state.byId.get(p).on_best_path;
        const path = svg('path', {
          d: `M${a.x},${y1} C${a.x},${my} ${b.x},${my} ${b.x},${y2}`, 'data-from': p,
          'data-to': n.id, class: `edge to-${n.kind}${best ? ' on-best-path' : ''}`,
        });
        if (best) onPath.push(path); else edges.appendChild(path);
      }
    }
    edges.append(...onPath);
    const w = NODE_W, h = NODE_H;
    for (const n of nodes) {
      const { x, y } = state.pos.get(n.id);
      const cls = ['node', n.kind, n.best && 'best', n.on_best_path && 'on-best-path'];
      const node = svg('g', {
        class: cls.filter(Boolean).join(' '), 'data-node-id': n.id,
        transform: `translate(${x},${y})`, tabindex: 0, role: 'button',
      });
      node.append(
        svg('title', {}, tooltip(n)),
        svg('rect', { class: 'ring', x: -w / 2 - 5, y: -h / 2 - 5, width: w + 10, height: h + 10, rx: 11 }),
        svg('rect', { class: 'box', x: -w / 2, y: -h / 2, width: w, height: h, rx: 7 }),
        svg('text', { class: 'nid', x: 0, y: -4 }, `#${n.id} ${n.operator}`),
        svg('text', { class: 'nmetric', x: 0, y: 12 }, metricLabel(n)),
      );
      if (n.best) node.appendChild(svg('text', { class: 'star', x: w / 2 - 2, y: -h / 2 + 4 }, '★'));
      drawn.appendChild(node);
    }
    g.append(edges, drawn);
  }

  function setZoom(z, anchor) {
    const pane = $('graph-pane'), g = $('graph'), old = state.zoom;
    state.zoom = Math.min(3, Math.max(0.15, z));
    g.setAttribute('width', String(Math.ceil(state.size.w * state.zoom)));
    g.setAttribute('height', String(Math.ceil(state.size.h * state.zoom)));
    $('zoom-reset').textContent = Math.round(state.zoom * 100) + '%';
    if (anchor && old !== state.zoom) {  // keep the point under the cursor where it is
      pane.scrollLeft = ((pane.scrollLeft + anchor.x) / old) * state.zoom - anchor.x;
      pane.scrollTop = ((pane.scrollTop + anchor.y) / old) * state.zoom - anchor.y;
    }
  }

  function fitZoom() {
    const pane = $('graph-pane');
    if (!state.size.w) return;
    setZoom(Math.min(1, (pane.clientWidth - 8) / state.size.w,
      (pane.clientHeight - 8) / state.size.h));
  }

  // Brings a node into view, in the graph and in the list, if it is not.
  function scrollToNode(id) {
    const p = state.pos.get(id), pane = $('graph-pane');
    if (!p) return;
    const x = p.x * state.zoom, y = p.y * state.zoom, m = NODE_W * state.zoom;
    if (x - m < pane.scrollLeft || x + m > pane.scrollLeft + pane.clientWidth) {
      pane.scrollLeft = x - pane.clientWidth / 2;
    }
    if (y - m < pane.scrollTop || y + m > pane.scrollTop + pane.clientHeight) {
      pane.scrollTop = y - pane.clientHeight / 2;
    }
    const row = document.querySelector(`#node-list tr[data-node-id="${id}"]`), list = $('list-pane');
    if (row && (row.offsetTop < list.scrollTop + 30
        || row.offsetTop + row.offsetHeight > list.scrollTop + list.clientHeight)) {
      list.scrollTop = row.offsetTop - list.clientHeight / 2;
    }
  }

  function whyText(n) {
    if (n.kind === 'buggy') return n.bug_reason || 'buggy';
    if (n.kind === 'running') return n.state + '…';
    if (n.kind === 'interrupted') return `interrupted (${n.state})`;
    return n.summary || '';
  }

  function drawList() {
    const body = document.querySelector('#node-list tbody');
    body.textContent = '';
    for (const n of state.run.nodes) {
      const tr = el('tr', n.kind + (n.on_best_path ? ' on-best-path' : ''));
      tr.dataset.nodeId = String(n.id);
      const kind = el('td'), why = el('td', 'why', whyText(n));
      kind.appendChild(el('span', 'badge ' + n.kind, n.kind));
      why.title = why.textContent;
      tr.append(
        el('td', 'num', `#${n.id}${n.best ? ' ★' : ''}`),
        el('td', 'num', n.parents.map((p) => '#' + p).join(', ')),
        el('td', null, n.operator), kind,
        el('td', 'num', n.metric !== null ? fmtMetric(n.metric) : n.kind === 'buggy' ? '✗' : '—'),
        why,
      );
      body.appendChild(tr);
    }
  }

  // ---- header ------------------------------------------------------------------------------

  function drawHeader() {
    const run = state.run, r = run.run;
    $('run-title').textContent = r.task || '(no task)';
    document.title = `${r.task || 'run'} · Podium viewer`;
    const status = $('run-status');
    status.textContent = r.status + (r.stop_reason ? ` (${r.stop_reason})` : '');
    status.className = 'status s-' + r.status;
    $('node-count').textContent = `${run.nodes.length} node${run.nodes.length === 1 ? '' : 's'}`;
    $('run-dir').textContent = r.dir;
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

  // The classes that change without a redraw: filtered-out (dimmed) and selected.
  function applyClasses() {
    if (!state.run) return;
    const shown = new Set(state.run.nodes.filter(passes).map((n) => n.id));
    document.querySelectorAll('#graph g.node, #node-list tr[data-node-id]').forEach((e) => {
      const id = Number(e.dataset.nodeId);
      e.classList.toggle('filtered-out', !shown.has(id));
      e.classList.toggle('selected', id === state.selected);
    });
    document.querySelectorAll('#graph path.edge').forEach((e) => e.classList.toggle('filtered-out',
      !shown.has(Number(e.dataset.from)) || !shown.has(Number(e.dataset.to))));
    $('match-count').textContent = `${shown.size} of ${state.run.nodes.length}`;
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
    const pre = el('pre', null, text || ''), lines = pre.textContent.split('\n').length;
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

  function drawError(ex) {
    const box = $('detail-error');
    box.textContent = '';
    const has = ex && (ex.error_name || ex.error_value || ex.traceback || ex.killed_reason || ex.timed_out);
    $('sec-error').hidden = !has;
    if (!has) return;
    const line = [ex.error_name, ex.error_value].filter(Boolean).join(': ');
    if (line) box.appendChild(el('p', 'errline', line));
    if (ex.killed_reason) box.appendChild(el('p', 'errline', 'killed: ' + ex.killed_reason));
    else if (ex.timed_out) box.appendChild(el('p', 'errline', 'timed out'));
    if (ex.traceback) box.appendChild(el('pre', null, ex.traceback));
  }

  // n: the LightNode; d: its NodeDetail, or null when it could not be had.
  function drawDetail(n, d) {
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
    ]);
    $('detail-metric').textContent = n.metric !== null
      ? `metric ${fmtMetric(n.metric)}${direction(state.run.run.lower_is_better)}`
      : n.kind === 'buggy' ? 'no metric: buggy'
        : n.kind === 'running' ? `no metric yet (${n.state})` : 'no metric';
    const bug = $('detail-bug');
    bug.textContent = n.bug_reason ? 'Bug: ' + n.bug_reason : '';
    bug.hidden = !n.bug_reason;
    const none = n.kind === 'running' ? '(not written yet)' : '(not available)';
    $('detail-summary').textContent = d ? d.summary || '(no review yet)' : none;
    $('detail-plan').textContent = d ? d.plan || '(no plan)' : none;
    const code = $('detail-code').firstElementChild;
    if (d && d.code_html) code.innerHTML = d.code_html;  // pygments' output: escaped, spans only
    else code.textContent = d ? '(no code yet)' : none;
    const out = $('detail-output');
    out.textContent = d ? d.output || '(no output)' : none;
    out.classList.toggle('dim', !d || !d.output);
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
  }

  async function openNode(id, opts = {}) {
    state.selected = id;
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
    if (opts.scroll) scrollToNode(id);
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
  }

  function closeDetail() {
    state.selected = null;
    delete $('detail').dataset.nodeId;
    $('detail-body').hidden = true;
    $('detail-empty').hidden = false;
    history.replaceState(null, '', location.pathname + location.search);
    applyClasses();
  }

  function hashNode() {
    const m = /^#node=(\d+)$/.exec(location.hash);
    return m ? Number(m[1]) : null;
  }

  // ---- polling: the run, again and again while it is live -----------------------------------

  async function applyRun(run) {
    state.run = run;
    state.byId = new Map(run.nodes.map((n) => [n.id, n]));
    drawHeader();
    drawOperatorOptions();
    drawGraph();
    drawList();
    if (state.matches) await runSearch();  // new nodes may match the text filter
    applyClasses();
    if (!state.started) {
      state.started = true;
      const id = hashNode(), pane = $('graph-pane');
      if (state.size.w > pane.clientWidth) {  // a big graph: shrink it, to a readable size
        fitZoom();
        if (state.zoom < 0.5) setZoom(0.5);
        const best = state.pos.get(run.run.best_node);
        if (best && id === null) pane.scrollLeft = best.x * state.zoom - pane.clientWidth / 2;
      }
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

  function main() {
    const openFrom = (e, sel) => {
      const hit = e.target.closest(sel);
      if (hit) openNode(Number(hit.dataset.nodeId), { scroll: sel.startsWith('tr') });
    };
    $('graph').addEventListener('click', (e) => openFrom(e, 'g.node'));
    $('graph').addEventListener('keydown', (e) => {
      if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); openFrom(e, 'g.node'); }
    });
    $('node-list').addEventListener('click', (e) => openFrom(e, 'tr[data-node-id]'));
    $('detail').addEventListener('click', (e) => {
      const b = e.target.closest('button[data-goto]');
      if (b) openNode(Number(b.dataset.goto), { scroll: true });
    });
    $('detail-close').addEventListener('click', closeDetail);
    $('goto-best').addEventListener('click', () => {
      const best = state.run && state.run.run.best_node;
      if (best !== null && best !== undefined) openNode(best, { scroll: true });
    });
    $('filter-operator').addEventListener('change', applyClasses);
    $('filter-state').addEventListener('change', applyClasses);
    let timer = null;
    $('filter-text').addEventListener('input', () => {
      clearTimeout(timer);
      timer = setTimeout(runSearch, SEARCH_DEBOUNCE_MS);
    });
    $('zoom-in').addEventListener('click', () => setZoom(state.zoom * 1.25));
    $('zoom-out').addEventListener('click', () => setZoom(state.zoom / 1.25));
    $('zoom-reset').addEventListener('click', () => setZoom(1));
    $('zoom-fit').addEventListener('click', fitZoom);
    $('graph-pane').addEventListener('wheel', (e) => {
      if (!e.ctrlKey && !e.metaKey) return;  // a plain wheel scrolls; ctrl + wheel zooms
      e.preventDefault();
      const box = $('graph-pane').getBoundingClientRect();
      setZoom(state.zoom * Math.exp(-e.deltaY / 400), { x: e.clientX - box.left, y: e.clientY - box.top });
    }, { passive: false });
    window.addEventListener('hashchange', () => {
      const id = hashNode();
      if (id !== null && id !== state.selected && state.run) openNode(id, { scroll: true });
    });
    poll();
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', main);
  else main();
})();
