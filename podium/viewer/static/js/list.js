// The node list: a row per node, sortable by any column.
(() => {
  'use strict';
  const { state, el, fmtCost, fmtSecs, lowerIsBetter, metricLabel, applyClasses } = podiumViewer;

  function whyText(n) {
    if (n.kind === 'buggy') return n.bug_reason || 'buggy';
    if (n.kind === 'running') return n.state + '…';
    if (n.kind === 'interrupted') return n.state === 'interrupted' ? 'interrupted' : `interrupted while ${n.state}`;
    if (n.kind === 'analysis') return n.findings || '(no findings recorded)';
    return n.summary || '';
  }

  function sortValue(n, key) {
    switch (key) {
      case 'parents': return n.parents.length ? n.parents[0] : -1;
      // Best first in the task's direction; a buggy node's metric (a leaked score, say) is not
      // one to rank, so buggy nodes come after the good ones.
      case 'metric': return n.metric === null || n.kind !== 'good' ? null : (lowerIsBetter() ? n.metric : -n.metric);
      case 'why': return whyText(n).toLowerCase();
      case 'step': return n.step;
      default: return n[key];
    }
  }

  // Rows in the sort's order; missing values last whichever the direction.
  function sortedNodes() {
    const { key, dir } = state.sort;
    return [...state.nodes].sort((a, b) => {
      const va = sortValue(a, key), vb = sortValue(b, key);
      if (va === vb) return a.id - b.id;
      if (va === null || va === undefined) return 1;
      if (vb === null || vb === undefined) return -1;
      return (va < vb ? -1 : 1) * dir;
    });
  }

  function drawList() {
    const body = document.querySelector('#node-list tbody');
    const frag = document.createDocumentFragment();
    for (const n of sortedNodes()) {
      const tr = el('tr', n.kind + (n.on_best_path ? ' on-best-path' : ''));
      tr.dataset.nodeId = String(n.id);
      const kind = el('td'), why = el('td', 'why', whyText(n));
      kind.appendChild(el('span', 'badge ' + n.kind, n.kind));
      why.title = why.textContent;
      tr.append(
        el('td', 'num', `#${n.id}${n.best ? ' ★' : ''}`),
        el('td', 'num', n.step ?? '—'),
        el('td', 'num', n.parents.map((p) => '#' + p).join(', ')),
        el('td', null, n.operator), kind,
        el('td', 'num', n.metric !== null || n.kind === 'buggy' ? metricLabel(n) : '—'),
        el('td', 'num', fmtSecs(n.total_s)),
        el('td', 'num', n.cost_usd ? fmtCost(n.cost_usd) : '—'),
        why,
      );
      frag.appendChild(tr);
    }
    body.textContent = '';
    body.appendChild(frag);
    for (const th of document.querySelectorAll('#node-list th[data-sort]')) {
      const on = th.dataset.sort === state.sort.key;
      th.setAttribute('aria-sort', on ? (state.sort.dir > 0 ? 'ascending' : 'descending') : 'none');
    }
  }

  function sortBy(key) {
    state.sort = { key, dir: state.sort.key === key ? -state.sort.dir : 1 };
    drawList();
    applyClasses();
  }

  Object.assign(podiumViewer, { drawList, sortBy });
})();
