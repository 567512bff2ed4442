// Podium sweep page: the grid of a sweep's runs (tasks × strategies × models × seeds), each
// run's state, medal and best score, live while the sweep runs; a run opens its own page
// (runs/<id>/, served by the same server). Plain ES2020; every string from the sweep is set as
// text. No eval, no inline handlers (the page's CSP forbids them).
'use strict';

(() => {
  const POLL_MS = 2000, POLL_IDLE_MS = 5000;
  const $ = (id) => document.getElementById(id);
  let etag = null, sweep = null;

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function fmtMetric(m) {
    if (m === null || m === undefined) return '—';
    if (Math.abs(m) >= 100) return m.toFixed(Math.abs(m) >= 1000 ? 0 : 1);
    return String(Number(m.toPrecision(4)));
  }
  function fmtSecs(s) {
    if (s === null || s === undefined) return '';
    if (s < 60) return Math.round(s) + ' s';
    const m = Math.floor(s / 60), h = Math.floor(m / 60);
    return h ? `${h} h ${String(m % 60).padStart(2, '0')} m` : `${m} m`;
  }
  const MEDAL = { gold: '🥇', silver: '🥈', bronze: '🥉' };

  // One run as a link: state colour, medal, best score (graded, else the best metric so far).
  function runLink(r) {
    const a = el('a', `run s-${r.state}${r.live ? ' live-run' : ''}`);
    a.href = r.href;
    a.dataset.runId = r.id;
    a.dataset.state = r.state;
    a.append(el('span', 'seed', `seed ${r.seed}`));
    const medal = r.medal ? `${MEDAL[r.medal] || ''} ${r.medal}` : (r.state === 'finished' && r.graded ? 'no medal' : '');
    if (medal) a.append(el('span', 'medal', medal));
    const score = r.score !== null && r.score !== undefined ? `score ${fmtMetric(r.score)}`
      : r.best_metric !== null && r.best_metric !== undefined ? `best ${fmtMetric(r.best_metric)}` : '';
    if (score) a.append(el('span', 'score', score));
    const steps = r.steps !== null && r.steps !== undefined ? `${r.steps} step${r.steps === 1 ? '' : 's'}` : '';
    a.append(el('span', 'meta dim', [r.state, steps, fmtSecs(r.elapsed_s)].filter(Boolean).join(' · ')));
    const tip = [`${r.task} · ${r.strategy} · ${r.model} · seed ${r.seed}`, `state: ${r.state}`];
    if (r.error) tip.push('error: ' + r.error);
    if (r.attempts > 1) tip.push(`attempts: ${r.attempts}`);
    a.title = tip.join('\n');
    return a;
  }

  function draw(data) {
    sweep = data;
    const s = data.sweep;
    $('sweep-title').textContent = s.name || 'sweep';
    document.title = `${s.name || 'sweep'} · Podium sweep`;
    $('sweep-dir').textContent = s.dir;
    const status = $('sweep-status');
    status.textContent = s.status;
    status.className = 'status s-' + s.status;
    const stats = $('sweep-stats');
    stats.textContent = '';
    const pairs = [['runs', String(data.runs.length)], ...Object.entries(s.counts).filter(([, n]) => n)
      .map(([k, n]) => [k, String(n)])];
    if (s.medals !== undefined) pairs.push(['medals', String(s.medals)]);
    for (const [k, v] of pairs) {
      const item = el('div', 'stat');
      item.append(el('dt', null, k), el('dd', null, v));
      stats.appendChild(item);
    }
    const cols = [];
    for (const st of data.axes.strategies) for (const m of data.axes.models) cols.push([st, m]);
    const head = $('sweep-grid').querySelector('thead'), body = $('sweep-grid').querySelector('tbody');
    head.textContent = '';
    body.textContent = '';
    const tr = el('tr');
    tr.appendChild(el('th', null, 'task'));
    for (const [st, m] of cols) {
      const th = el('th');
      th.append(el('div', null, st), el('div', 'dim', m));
      tr.appendChild(th);
    }
    head.appendChild(tr);
    const key = (task, strategy, model) => JSON.stringify([task, strategy, model]);
    const index = new Map();
    for (const r of data.runs) {
      const k = key(r.task, r.strategy, r.model);
      index.set(k, [...(index.get(k) || []), r]);
    }
    for (const task of data.axes.tasks) {
      const row = el('tr');
      row.appendChild(el('th', 'task', task));
      for (const [st, m] of cols) {
        const td = el('td', 'cell');
        const runs = (index.get(key(task, st, m)) || []).sort((a, b) => a.seed - b.seed);
        for (const r of runs) td.appendChild(runLink(r));
        row.appendChild(td);
      }
      body.appendChild(row);
    }
    $('sweep-empty').hidden = data.runs.length > 0;
  }

  async function poll() {
    let ok = true;
    try {
      const r = await fetch('api/sweep', { headers: etag ? { 'If-None-Match': etag } : {}, cache: 'no-store' });
      if (r.status === 200) { etag = r.headers.get('ETag'); draw(await r.json()); }
      else if (r.status !== 304) ok = false;
    } catch (e) {
      ok = false;
    }
    $('sweep-status').classList.toggle('disconnected', !ok);
    setTimeout(poll, sweep && sweep.sweep.status === 'running' ? POLL_MS : POLL_IDLE_MS);
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', poll);
  else poll();
})();
