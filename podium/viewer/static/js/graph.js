// The graph's SVG: an element per node and per edge, built on new data, placed on a zoom. Each
// node is drawn at a fixed size on screen, in one of three levels of detail (geometry.js'
// lodFor): a box with its id, operator and metric; a chip with its metric; a dot.
(() => {
  'use strict';
  const { $, state, svg, fmtMetric, metricLabel, descendants, SLOT_H, kx, ky, gx, gy, sx, sy } = podiumViewer;

  function tooltip(n) {
    const lines = [`#${n.id} ${n.operator} · ${n.kind}${n.best ? ' · final node ★' : ''}`];
    if (n.parents.length) lines.push('parents: ' + n.parents.map((p) => '#' + p).join(', '));
    if (n.refs.length) lines.push('cites: ' + n.refs.map((r) => '#' + r).join(', '));
    if (n.metric !== null) lines.push('metric ' + fmtMetric(n.metric));
    if (n.findings) lines.push('findings: ' + n.findings);
    if (n.bug_reason) lines.push('bug: ' + n.bug_reason);
    if (n.kind === 'running') lines.push('state: ' + n.state);
    if (state.collapsed.has(n.id)) lines.push(`collapsed: ${descendants(n.id).size} nodes hidden`);
    return lines.join('\n');
  }

  function edgePath(a, b) {
    const x1 = gx(a), y1 = gy(a), x2 = gx(b), y2 = gy(b), my = (y1 + y2) / 2;
    return `M${x1},${y1} C${x1},${my} ${x2},${my} ${x2},${y2}`;
  }

  // A reference within a layer (a sibling's finding) bows up over the nodes between.
  function refPath(a, b) {
    if (a.y !== b.y) return edgePath(a, b);
    const x1 = gx(a), x2 = gx(b), y = gy(a), up = y - 0.6 * SLOT_H;
    return `M${x1},${y} C${x1},${up} ${x2},${up} ${x2},${y}`;
  }

  // Builds every edge and node element (on new data); positions come from placeNodes.
  function buildGraph() {
    const edges = $('edge-layer'), nodes = $('node-layer');
    edges.textContent = '';
    nodes.textContent = '';
    $('graph-empty').hidden = state.nodes.length > 0;
    const refs = [], plain = [], secondary = [], path = [];
    for (const n of state.nodes) {
      for (const r of n.refs) {  // a reference: cited, not descended from (no layout, no path)
        const a = state.byId.get(r);
        if (!a) continue;
        refs.push(svg('path', {
          d: refPath(a, n), 'data-from': r, 'data-to': n.id, class: 'edge reference',
        }));
      }
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
    // References under the tree's edges, the best path last, over the others.
    edges.append(...refs, ...plain, ...secondary, ...path);
    $('legend-refs').hidden = !refs.length;
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

  Object.assign(podiumViewer, { buildGraph, placeNodes });
})();
