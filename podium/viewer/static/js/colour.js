// The metric's colour scale, and its legend in the toolbar.
(() => {
  'use strict';
  const { $, state, fmtMetric, lowerIsBetter } = podiumViewer;

  // Good nodes are coloured by where their metric sits between the 10th percentile of the good
  // nodes' metrics (pale) and the best one (deep green), in the task's direction; worse than
  // the 10th percentile is as pale as it. A percentile, not the worst, so one outlier does not
  // wash every other node out.
  function colourScale() {
    const sign = lowerIsBetter() ? -1 : 1;
    const good = state.nodes.filter((n) => n.kind === 'good' && n.metric !== null);
    const vals = good.map((n) => sign * n.metric).sort((a, b) => a - b);
    state.colour = new Map();
    if (!vals.length) return { lo: null, hi: null };
    const lo = vals[Math.floor((vals.length - 1) * 0.1)], hi = vals[vals.length - 1];
    for (const n of good) {
      const t = hi > lo ? Math.min(1, Math.max(0, (sign * n.metric - lo) / (hi - lo))) : 1;
      state.colour.set(n.id, { t, fill: ramp(t), dark: t > 0.6 });
    }
    return { lo: sign * lo, hi: sign * hi };
  }

  // t in [0, 1] -> a green from pale to deep: one hue and saturation, the lightness falling,
  // so a better metric is always a darker colour (every channel falls with the lightness).
  function ramp(t) {
    return `hsl(140, 55%, ${(90 - 66 * t).toFixed(1)}%)`;
  }

  function drawLegend(range) {
    const has = range.lo !== null;
    $('legend').querySelector('.scale').hidden = !has;
    if (!has) return;
    $('legend-worst').textContent = fmtMetric(range.lo);
    $('legend-best').textContent = `${fmtMetric(range.hi)} ★${lowerIsBetter() ? ' (lower is better)' : ''}`;
    $('legend').title = 'good nodes: pale = at or below the 10th percentile of good metrics, '
      + 'deep green = the best metric';
  }

  Object.assign(podiumViewer, { colourScale, drawLegend });
})();
