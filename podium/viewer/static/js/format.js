// Numbers, times and a node's metric as every part of the page writes them.
(() => {
  'use strict';
  const { state } = podiumViewer;

  function fmtMetric(m) {
    if (m === null || m === undefined) return '—';
    if (Math.abs(m) >= 100) return m.toFixed(Math.abs(m) >= 1000 ? 0 : 1);
    return String(Number(m.toPrecision(4)));
  }
  const fmtInt = (n) => (n || 0).toLocaleString('en-US');
  const fmtCost = (c) => '$' + (c || 0).toFixed((c || 0) < 1 ? 4 : 2);
  function fmtSecs(s) {
    if (s === null || s === undefined) return '—';
    if (s < 60) return s.toFixed(s < 10 ? 2 : 1) + ' s';
    const m = Math.floor(s / 60), h = Math.floor(m / 60);
    if (h) return `${h} h ${String(m % 60).padStart(2, '0')} m`;
    return `${m} m ${String(Math.round(s % 60)).padStart(2, '0')} s`;
  }
  function fmtBytes(b) {
    const units = ['B', 'kB', 'MB', 'GB', 'TB'];
    let i = 0;
    while (b >= 1000 && i < units.length - 1) { b /= 1000; i++; }
    return (i ? b.toFixed(1) : String(b)) + ' ' + units[i];
  }
  const fmtTime = (iso) => (iso ? iso.replace('T', ' ').replace(/\.\d+/, '')
    .replace(/\+00:00$/, ' UTC') : '—');
  const lowerIsBetter = () => Boolean(state.run && state.run.run.lower_is_better);
  const direction = (lower) => (lower === null || lower === undefined ? ''
    : lower ? ' (lower is better)' : ' (higher is better)');
  // The metric as the graph and the list both show it: a buggy node's ✗ comes first, with the
  // metric it printed (if any) after it, so the two never disagree.
  function metricLabel(n) {
    if (n.kind === 'buggy') return n.metric !== null ? `✗ ${fmtMetric(n.metric)}` : '✗';
    if (n.metric !== null) return fmtMetric(n.metric);
    return n.kind === 'running' ? n.state : n.kind;
  }
  // What makes the open node's detail stale in live mode.
  const signature = (n) => [n.state, n.kind, n.metric, n.best, n.on_best_path, n.finished_at]
    .join('|');
  const isDiffable = (n) => n.parents.length > 0;

  Object.assign(podiumViewer, { fmtMetric, fmtInt, fmtCost, fmtSecs, fmtBytes, fmtTime,
    lowerIsBetter, direction, metricLabel, signature, isDiffable });
})();
