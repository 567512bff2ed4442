// The header: the run's title, status, live mark and figures; a link back to its sweep.
(() => {
  'use strict';
  const { $, state, el, fmtMetric, fmtInt, fmtCost, fmtSecs, direction, source } = podiumViewer;

  function drawHeader() {
    const run = state.run, r = run.run;
    $('run-title').textContent = r.task || '(no task)';
    document.title = `${r.task || 'run'} · Podium viewer`;
    const status = $('run-status');
    // "interrupted (interrupted)" says nothing twice: the reason only when it adds something.
    status.textContent = r.status + (r.stop_reason && r.stop_reason !== r.status ? ` (${r.stop_reason})` : '');
    status.className = 'status s-' + r.status;
    $('node-count').textContent = `${run.nodes.length} node${run.nodes.length === 1 ? '' : 's'}`;
    $('run-dir').textContent = r.dir;
    $('back-to-sweep').hidden = !source.live || !/\/runs\/[^/]+\/$/.test(location.pathname);
    const live = $('live');
    if (run.live && !live) {
      const dot = el('span', 'live', 'live');
      dot.id = 'live';
      dot.title = 'the run is being written: new nodes appear as they come';
      status.after(dot);
    } else if (!run.live && live) live.remove();
    const roles = [['plan', r.plan_model], ['review', r.review_model]]
      .filter(([, name]) => name && name !== r.model).map(([role, name]) => `${role}: ${name}`);
    const others = roles.length ? ` (${roles.join(', ')})` : '';
    const stats = [['strategy', r.strategy], ['model', r.model + others], ['steps', fmtInt(r.steps)],
      ['good', fmtInt(r.good_nodes)], ['buggy', fmtInt(r.buggy_nodes)]];
    if (r.analysis_nodes) stats.push(['analyses', fmtInt(r.analysis_nodes)]);
    if (r.discarded_nodes) stats.push(['discarded', fmtInt(r.discarded_nodes)]);
    if (r.best_node !== null) {
      stats.push(['best', `#${r.best_node} · ${fmtMetric(r.best_metric)}${direction(r.lower_is_better)}`]);
    }
    stats.push(['cost', fmtCost(r.cost_usd)],
      ['tokens', `${fmtInt(r.input_tokens)} in / ${fmtInt(r.output_tokens)} out`]);
    if (r.elapsed_s !== null) stats.push(['elapsed', fmtSecs(r.elapsed_s)]);
    const g = r.grade;
    if (g) {
      const parts = [g.score !== null ? 'score ' + fmtMetric(g.score) : 'no score',
        g.medal ? g.medal + ' medal' : g.any_medal ? 'medal' : 'no medal'];
      if (!g.valid_submission) parts.push('invalid submission');
      if (g.leaderboard_percentile !== null) parts.push(`beats ${fmtMetric(g.leaderboard_percentile)}%`);
      stats.push(['grade', parts.join(' · ')]);
    }
    const dl = $('run-stats');
    dl.textContent = '';
    for (const [k, v] of stats) {
      const item = el('div', 'stat' + (k === 'grade' && g.medal ? ' medal-' + g.medal : ''));
      item.append(el('dt', null, k), el('dd', null, v));
      dl.appendChild(item);
    }
    $('goto-best').disabled = r.best_node === null || !state.byId.has(r.best_node);
  }

  function setConnected(ok) {
    $('run-status').classList.toggle('disconnected', !ok);
    const live = $('live');
    if (live) live.textContent = ok ? 'live' : 'live (no answer)';
  }

  Object.assign(podiumViewer, { drawHeader, setConnected });
})();
