// The detail panel: a node in full.
(() => {
  'use strict';
  const { $, state, el, fmtMetric, fmtInt, fmtCost, fmtSecs, fmtBytes, fmtTime, direction,
    drawCollapseButton, drawError, drawCall, drawNotebook, drawCode, drawOutput } = podiumViewer;

  function kv(dl, pairs) {
    dl.textContent = '';
    for (const [k, v] of pairs) {
      const dd = el('dd');
      if (v instanceof Node) dd.appendChild(v);
      else dd.textContent = v === null || v === undefined ? '—' : String(v);
      dl.append(el('dt', null, k), dd);
    }
  }

  function nodeLinks(ids) {
    const span = el('span', 'links', ids.length ? undefined : '—');
    for (const id of ids) {
      const b = el('button', 'link', '#' + id);
      b.type = 'button';
      b.dataset.goto = String(id);
      span.appendChild(b);
    }
    return span;
  }

  // The nodes n cites (its reference edges) and those citing it, where there are any.
  function references(n, d) {
    const citing = d ? d.cited_by : state.nodes.filter((m) => m.refs.includes(n.id)).map((m) => m.id);
    return [
      ...(n.refs.length ? [['references', nodeLinks(n.refs)]] : []),
      ...(citing.length ? [['cited by', nodeLinks(citing)]] : []),
    ];
  }

  // An analysis's ablation (NodeDetail.ablation): part, score, change against the baseline.
  const signed = (c) => (c > 0 ? '+' : c < 0 ? '-' : '±') + fmtMetric(Math.abs(c));
  function drawAblation(d) {
    const table = $('detail-ablation'), rows = d ? d.ablation : [], body = table.tBodies[0];
    table.hidden = !rows.length;
    body.textContent = '';
    for (const r of rows) {
      body.appendChild(el('tr', r.change === null ? 'baseline' : null)).append(
        el('td', null, r.part), el('td', 'num', fmtMetric(r.score)),
        el('td', 'num', r.change === null ? 'baseline' : signed(r.change)));
    }
  }

  function reviewText(n, d) {
    if (!d) return n.kind === 'running' ? '(not written yet)' : '(not available)';
    if (d.summary) return d.summary;
    if (n.kind === 'running') return '(not reviewed yet)';
    if (n.kind === 'interrupted') return '(interrupted before its review)';
    if (n.kind === 'analysis') return '(no findings recorded)';
    if (!(d.calls || []).some((c) => c.role === 'review')) {
      return '(no review model was asked: the node is judged by its metric line and the hard checks)';
    }
    return '(the review gave no summary)';
  }

  // n: the LightNode; d: its NodeDetail, or null when it could not be had.
  function drawDetail(n, d) {
    state.detail = d;
    $('detail').dataset.nodeId = String(n.id);
    $('detail-empty').hidden = true;
    $('detail-body').hidden = false;
    const title = $('detail-title');
    title.textContent = `Node #${n.id} · ${n.operator} `;
    title.appendChild(el('span', 'badge ' + n.kind, n.kind));
    if (n.best) title.appendChild(el('span', 'final', '★ final node'));
    else if (n.on_best_path) title.appendChild(el('span', 'onpath', 'on best path'));
    kv($('detail-meta'), [
      ['operator', n.operator], ['parents', nodeLinks(n.parents)],
      ['children', nodeLinks(d ? d.children : state.children.get(n.id) || [])],
      ...references(n, d),
      ['step', n.step], ['state', n.state], ['worker', n.worker],
      ['created', fmtTime(n.created_at)], ['finished', fmtTime(n.finished_at)],
      ['submission', d ? (d.has_submission ? 'yes' : 'no') : null],
      ...(d && d.fresh ? [['fresh kernel', d.fresh]] : []),
    ]);
    $('detail-metric').textContent = n.metric !== null
      ? `metric ${fmtMetric(n.metric)}${direction(state.run.run.lower_is_better)}${n.kind === 'buggy' ? ' — but the node is buggy' : ''}`
      : n.kind === 'buggy' ? 'no metric: buggy'
        : n.kind === 'running' ? `no metric yet (${n.state})`
          : n.kind === 'analysis' ? 'no metric: an analysis (its findings below)' : 'no metric';
    const bug = $('detail-bug');
    bug.textContent = n.bug_reason ? 'Bug: ' + n.bug_reason : '';
    bug.hidden = !n.bug_reason;
    $('summary-title').textContent = n.kind === 'analysis' ? 'Findings' : 'Review';
    $('detail-summary').textContent = reviewText(n, d);
    drawAblation(d);
    const none = n.kind === 'running' ? '(not written yet)' : '(not available)';
    $('detail-plan').textContent = d ? d.plan || '(no plan)' : none;
    drawNotebook(d);
    drawCode();
    drawOutput(n, d);
    const ex = d && d.exec;
    drawError(ex);
    $('detail-exec').textContent = ex ? [`exec ${ex.status}`, fmtSecs(ex.duration_s),
      ex.peak_memory_bytes !== null && 'peak memory ' + fmtBytes(ex.peak_memory_bytes),
      ex.output_bytes && `output ${fmtBytes(ex.output_bytes)}${ex.output_truncated ? ' (truncated)' : ''}`,
    ].filter(Boolean).join(' · ') : '';
    const u = d && d.usage, t = d && d.timings;
    kv($('detail-usage'), u ? [['input tokens', fmtInt(u.input_tokens)],
      ['output tokens', fmtInt(u.output_tokens)], ['cost', fmtCost(u.cost_usd)],
      ['model calls', u.calls]] : [['cost', fmtCost(n.cost_usd)]]);
    kv($('detail-timings'), t ? [['model', fmtSecs(t.model_s)],
      ['kernel start', fmtSecs(t.kernel_start_s)], ['execution', fmtSecs(t.exec_s)],
      ['review model', fmtSecs(t.review_model_s)], ['overhead', fmtSecs(t.overhead_s)],
      ['total', fmtSecs(t.total_s)]] : [['total', fmtSecs(n.total_s)]]);
    const calls = $('detail-calls');
    calls.textContent = '';
    if (d && d.calls.length) calls.append(...d.calls.map(drawCall));
    else calls.appendChild(el('p', 'dim', d ? '(no model calls recorded)' : none));
    drawCollapseButton();
  }

  Object.assign(podiumViewer, { drawDetail });
})();
