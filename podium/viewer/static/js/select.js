// Opening and closing a node; the URL hash #node=N names the open one.
(() => {
  'use strict';
  const { $, narrow, state, signature, source, drawTags, scrollToNode, applyClasses, revealNode,
    drawChart, drawDetail } = podiumViewer;

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

  Object.assign(podiumViewer, { openNode, closeDetail, hashNode });
})();
