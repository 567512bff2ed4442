// The toolbar's filters (operator, state, text search) and the classes they and the selection
// set on the graph, the list and the chart.
(() => {
  'use strict';
  const { $, state, source } = podiumViewer;

  function drawOperatorOptions() {
    const sel = $('filter-operator'), keep = sel.value, ops = state.run.operators;
    if ([...sel.options].slice(1).map((o) => o.value).join('\n') === ops.join('\n')) return;
    while (sel.options.length > 1) sel.remove(1);
    for (const op of ops) sel.appendChild(new Option(op, op));
    sel.value = ops.includes(keep) ? keep : '';
  }

  function passes(n) {
    const op = $('filter-operator').value, st = $('filter-state').value;
    if (op && n.operator !== op) return false;
    if (st === 'best-path' ? !n.on_best_path : st && n.kind !== st) return false;
    return !state.matches || state.matches.has(n.id);
  }

  // The classes that change without a rebuild: filtered-out (dimmed, or hidden with "hide
  // others"), folded (inside a collapsed subtree), selected, cursor.
  function applyClasses() {
    if (!state.run) return;
    const shown = new Set(state.nodes.filter(passes).map((n) => n.id));
    const hide = $('filter-hide').checked;
    $('graph').classList.toggle('hide-filtered', hide);
    document.querySelectorAll('#graph g.node, #node-list tr[data-node-id], #chart .pt').forEach((e) => {
      const id = Number(e.dataset.nodeId);
      e.classList.toggle('filtered-out', !shown.has(id));
      e.classList.toggle('folded', state.hidden.has(id));
      e.classList.toggle('selected', id === state.selected);
      e.classList.toggle('cursor', id === state.cursor);
      if (e.tagName === 'TR') e.hidden = hide && !shown.has(id);
    });
    document.querySelectorAll('#graph path.edge').forEach((e) => {
      const a = Number(e.dataset.from), b = Number(e.dataset.to);
      e.classList.toggle('filtered-out', !shown.has(a) || !shown.has(b));
      e.classList.toggle('folded', state.hidden.has(a) || state.hidden.has(b));
    });
    $('match-count').textContent = `${shown.size} of ${state.nodes.length}`;
  }

  async function runSearch() {
    const q = $('filter-text').value, seq = ++state.searchSeq;
    let matches = null;
    if (q.trim()) {
      try {
        matches = new Set(await source.search(q));
      } catch (e) {
        return;  // the server went away: keep the last result
      }
    }
    if (seq !== state.searchSeq) return;  // a newer search is under way
    state.matches = matches;
    applyClasses();
  }

  Object.assign(podiumViewer, { drawOperatorOptions, applyClasses, runSearch });
})();
