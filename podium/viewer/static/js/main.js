// Wiring: every control's events, then the first poll once the page is parsed.
(() => {
  'use strict';
  const { $, state, placeNodes, fit, zoomBy, setZoom, panBy, redrawView, minimapGoto,
    applyClasses, runSearch, toggleCollapse, sortBy, drawChart, showTab, setCodeView, drawCode,
    openNode, closeDetail, hashNode, onKey, poll } = podiumViewer;

  const SEARCH_DEBOUNCE_MS = 250;

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
