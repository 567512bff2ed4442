// A node's output; followed every second while the node runs (live pages only).
(() => {
  'use strict';
  const { $, state, source } = podiumViewer;

  const OUTPUT_POLL_MS = 1000;

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


  Object.assign(podiumViewer, { drawOutput });
})();
