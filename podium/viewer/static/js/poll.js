// Polling: the run, again and again while it is live; each new RunJSON redraws the page.
(() => {
  'use strict';
  const { state, signature, indexRun, source, colourScale, drawLegend, buildGraph, placeNodes,
    drawTags, drawMinimap, fit, redrawView, drawOperatorOptions, applyClasses, runSearch,
    drawList, drawChart, drawHeader, setConnected, openNode, hashNode } = podiumViewer;

  const POLL_LIVE_MS = 1000, POLL_IDLE_MS = 5000;

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

  Object.assign(podiumViewer, { poll });
})();
