// Collapsed subtrees: folding a node's descendants away, and back.
(() => {
  'use strict';
  const { $, state, descendants, computeHidden, buildGraph, placeNodes, drawTags, drawMinimap,
    applyClasses } = podiumViewer;

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

  // Expand every collapsed ancestor of a node about to be opened.
  function revealNode(id) {
    for (const c of [...state.collapsed]) if (descendants(c).has(id)) state.collapsed.delete(c);
    computeHidden();
    buildGraph();
    placeNodes();
  }

  Object.assign(podiumViewer, { toggleCollapse, drawCollapseButton, revealNode });
})();
