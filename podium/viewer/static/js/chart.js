// The metric over time (by step or wall time), and the tabs that switch list and chart.
(() => {
  'use strict';
  const { $, state, svg, fmtMetric, fmtSecs, lowerIsBetter } = podiumViewer;

  function chartX(n, t0) {
    if (state.chartX === 'time') {
      const t = Date.parse(n.finished_at || n.created_at);
      return Number.isFinite(t) ? (t - t0) / 1000 : null;
    }
    return n.step;
  }

  function drawChart() {
    const c = $('chart'), pane = $('chart-pane');
    c.textContent = '';
    if (state.tab !== 'chart' || !state.run) return;
    // The finished attempts at a solution: an analysis has no metric to plot (a failed one is
    // buggy like any node).
    const done = state.nodes.filter((n) => n.step !== null && (n.kind === 'good' || n.kind === 'buggy'));
    const scored = done.filter((n) => n.kind === 'good' && n.metric !== null);
    $('chart-empty').hidden = scored.length > 0;
    const W = Math.max(300, pane.clientWidth - 8), H = Math.max(160, pane.clientHeight - 8);
    c.setAttribute('viewBox', `0 0 ${W} ${H}`);
    c.setAttribute('width', String(W));
    c.setAttribute('height', String(H));
    if (!done.length) return;
    const t0 = Math.min(...state.nodes.map((n) => Date.parse(n.created_at)).filter(Number.isFinite));
    const xs = done.map((n) => chartX(n, t0)).filter((x) => x !== null);
    const L = 56, R = 12, T = 12, B = 44;
    const x0 = Math.min(...xs), x1 = Math.max(...xs, x0 + 1);
    const ms = scored.map((n) => n.metric).sort((a, b) => a - b);
    const lower = lowerIsBetter();
    // The y range: the good metrics between their 5th percentile on the worse side and the
    // best, so one very bad node does not flatten the rest; points beyond it sit on the edge.
    let y0 = ms.length ? ms[lower ? ms.length - 1 - Math.floor((ms.length - 1) * 0.05) : Math.floor((ms.length - 1) * 0.05)] : 0;
    let y1 = ms.length ? (lower ? ms[0] : ms[ms.length - 1]) : 1;
    if (y0 === y1) { y0 -= 0.5; y1 += 0.5; }
    const lo = Math.min(y0, y1), hi = Math.max(y0, y1), padY = (hi - lo) * 0.06;
    const X = (v) => L + ((v - x0) / (x1 - x0)) * (W - L - R);
    const plotB = H - B - 14;  // the band under the plot holds the buggy nodes
    const Y = (v) => {
      const clamped = Math.min(hi + padY, Math.max(lo - padY, v));
      return T + (1 - (clamped - (lo - padY)) / (hi - lo + 2 * padY)) * (plotB - T);
    };
    const axes = svg('g', { class: 'axes' });
    axes.append(svg('line', { x1: L, y1: plotB, x2: W - R, y2: plotB }),
      svg('line', { x1: L, y1: T, x2: L, y2: plotB }));
    for (let i = 0; i <= 4; i++) {
      const v = lo - padY + ((hi - lo + 2 * padY) * i) / 4, y = Y(v);
      axes.append(svg('line', { class: 'grid', x1: L, y1: y, x2: W - R, y2: y }),
        svg('text', { x: L - 6, y: y + 4, 'text-anchor': 'end' }, fmtMetric(v)));
    }
    for (let i = 0; i <= 5; i++) {
      const v = x0 + ((x1 - x0) * i) / 5;
      axes.append(svg('text', { x: X(v), y: H - B + 14, 'text-anchor': 'middle' },
        state.chartX === 'time' ? fmtSecs(v) : String(Math.round(v))));
    }
    axes.append(svg('text', { class: 'axis-title', x: (L + W - R) / 2, y: H - 8, 'text-anchor': 'middle' },
      state.chartX === 'time' ? 'wall time since the run started' : 'step'));
    axes.append(svg('text', { class: 'axis-title', x: L, y: H - B + 2, 'text-anchor': 'start' }, '✗ buggy'));
    c.appendChild(axes);
    // Best so far, as a step line in the task's direction.
    const order = [...scored].filter((n) => chartX(n, t0) !== null)
      .sort((a, b) => chartX(a, t0) - chartX(b, t0));
    let best = null, d = '';
    for (const n of order) {
      if (best === null || (lower ? n.metric < best : n.metric > best)) {
        const x = X(chartX(n, t0));
        d += best === null ? `M${x},${Y(n.metric)}` : ` H${x} V${Y(n.metric)}`;
        best = n.metric;
      }
    }
    if (d) c.appendChild(svg('path', { class: 'best-so-far', d: d + ` H${X(x1)}` }));
    const pts = svg('g', { class: 'points' });
    for (const n of done) {
      const x = chartX(n, t0);
      if (x === null) continue;
      const title = svg('title', {}, `#${n.id} ${n.operator} · ${n.kind}` + (n.metric !== null ? ` · ${fmtMetric(n.metric)}` : ''));
      let p;
      if (n.kind === 'buggy' || n.metric === null) {
        p = svg('text', { class: 'pt buggy', x: X(x), y: H - B - 2, 'text-anchor': 'middle', 'data-node-id': n.id }, '✗');
      } else {
        const col = state.colour.get(n.id);
        p = svg('circle', { class: `pt good${n.best ? ' best' : ''}`, cx: X(x), cy: Y(n.metric), r: n.best ? 6 : 4, 'data-node-id': n.id });
        if (col) p.style.setProperty('--fill', col.fill);
      }
      if (n.id === state.selected) p.classList.add('selected');
      p.appendChild(title);
      pts.appendChild(p);
    }
    c.appendChild(pts);
  }

  function showTab(tab) {
    state.tab = tab;
    $('tab-list').setAttribute('aria-selected', String(tab === 'list'));
    $('tab-chart').setAttribute('aria-selected', String(tab === 'chart'));
    $('list-pane').hidden = tab !== 'list';
    $('chart-pane').hidden = tab !== 'chart';
    $('chart-tools').hidden = tab !== 'chart';
    drawChart();
  }

  Object.assign(podiumViewer, { drawChart, showTab });
})();
