// An agentic node's notebook.
(() => {
  'use strict';
  const { $, el, fmtInt, fmtCost, fmtSecs, drawTraceback } = podiumViewer;

  // Its cells in order with their output and error, the model's words between them (as text:
  // never rendered as markdown or HTML), and above each turn's entries the model call that
  // asked for them: tokens, cost and time. Every string here is agent-written: textContent only.
  function drawNotebook(d) {
    const box = $('detail-notebook'), meta = $('notebook-meta'), nb = d && d.notebook;
    box.textContent = '';
    meta.textContent = '';
    $('sec-notebook').hidden = !nb;
    if (!nb) return;
    if (nb.problem) { box.appendChild(el('p', 'nb-problem', nb.problem)); return; }
    meta.textContent = notebookSummary(nb);
    let turn;
    for (const cell of nb.cells) {
      if (cell.turn !== turn && cell.turn !== null) box.appendChild(turnLine(cell));
      turn = cell.turn;
      box.appendChild(cell.type === 'code' ? drawCell(cell) : drawWords(cell));
    }
    if (nb.cells_left_out) box.appendChild(el('p', 'dim', `(${fmtInt(nb.cells_left_out)} more cells not shown)`));
  }

  function notebookSummary(nb) {
    const cells = nb.cells.filter((c) => c.type === 'code').length;
    const ended = nb.finished ? 'finished' : nb.ending ? `ended: ${nb.ending}` : 'not finished';
    return [`${cells} cell${cells === 1 ? '' : 's'}`,
      nb.turns !== null && nb.turns !== undefined && `${nb.turns} turn${nb.turns === 1 ? '' : 's'}`,
      ended].filter(Boolean).join(' · ');
  }

  // A turn's model call in one line (the full call is under Model calls, by its number).
  function turnLine(cell) {
    const c = cell.call, line = el('div', 'nb-turn');
    line.dataset.turn = String(cell.turn);
    line.textContent = [`turn ${cell.turn}`, ...(c ? [`code call #${c.seq}`,
      `${fmtInt(c.input_tokens)} in / ${fmtInt(c.output_tokens)} out tokens`, fmtCost(c.cost_usd),
      fmtSecs(c.latency_s)] : ['no model call recorded'])].join(' · ');
    return line;
  }

  function drawWords(cell) {
    const box = el('div', 'nb-words');
    box.dataset.turn = String(cell.turn);
    box.append(el('div', 'role', 'model'), el('div', 'text', cell.source));
    return box;
  }

  function drawCell(cell) {
    const box = el('div', 'nb-cell');
    box.dataset.cell = String(cell.number === null ? '' : cell.number);
    box.dataset.status = cell.status || '';
    const head = [`[cell ${cell.number === null ? '?' : cell.number}]`, cell.status || 'no status',
      cell.duration_s !== null && fmtSecs(cell.duration_s)].filter(Boolean).join(' · ');
    box.append(el('div', 'nb-head', head), el('pre', 'nb-code wrap', cell.source));
    if (cell.output) box.appendChild(el('pre', 'nb-output wrap', cell.output));
    if (cell.error) box.appendChild(drawCellError(cell.error));
    return box;
  }

  function drawCellError(er) {
    const box = el('div', 'nb-error'), tb = er.traceback_parsed;
    const line = (tb && tb.error) || [er.name, er.value].filter(Boolean).join(': ');
    if (line) box.appendChild(el('p', 'errline', line));
    if (tb && tb.frames && tb.frames.length) drawTraceback(box, tb);
    else if (er.traceback && er.traceback.trim() !== line.trim()) box.appendChild(el('pre', 'wrap', er.traceback));
    return box;
  }

  Object.assign(podiumViewer, { drawNotebook });
})();
