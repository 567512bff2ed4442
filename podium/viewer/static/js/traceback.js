// An error as the solution's author wants it: its line, the solution's own frames with their
// code, the library's folded.
(() => {
  'use strict';
  const { $, el } = podiumViewer;

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

  Object.assign(podiumViewer, { drawTraceback, drawError });
})();
