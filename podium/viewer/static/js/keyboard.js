// Keyboard shortcuts (the page's help lists them).
(() => {
  'use strict';
  const { $, state, drawTags, fit, zoomBy, scrollToNode, applyClasses, toggleCollapse,
    cycleCodeView, openNode, closeDetail } = podiumViewer;

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

  Object.assign(podiumViewer, { onKey });
})();
