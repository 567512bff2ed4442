// Labels beside small nodes: where nodes are too small for their own labels, the most telling
// ones (the open node, the final node and its path, the best metrics) get a label beside them,
// placed so none overlaps another.
(() => {
  'use strict';
  const { $, state, svg, lowerIsBetter, metricLabel, CHIP, sx, sy, paneSize, placeNodes } = podiumViewer;

  const MAX_TAGS = 60;  // labels beside small nodes

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

  Object.assign(podiumViewer, { scheduleTags, drawTags });
})();
