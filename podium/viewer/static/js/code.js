// A node's code, and its diff against a parent: unified, or side by side.
(() => {
  'use strict';
  const { $, state, el, isDiffable } = podiumViewer;

  function drawCodeViews(n, d) {
    const seg = $('code-views');
    seg.textContent = '';
    const views = [['code', 'code']];
    const diffs = (d && d.diffs) || [];
    diffs.forEach((df, i) => {
      const tag = diffs.length > 1 ? ` #${df.parent}` : ` #${df.parent}`;
      views.push([`unified:${i}`, `diff vs${tag} (+${df.added} −${df.removed})`], [`split:${i}`, 'side by side']);
    });
    if (!diffs.length && isDiffable(n)) views.push(['none', 'no diff: parent not found']);
    for (const [key, label] of views) {
      const b = el('button', 'seg-btn', label);
      b.type = 'button';
      b.dataset.view = key;
      b.disabled = key === 'none';
      b.setAttribute('aria-pressed', String(key === currentViewKey()));
      seg.appendChild(b);
    }
  }

  const currentViewKey = () => (state.codeView === 'code' ? 'code' : `${state.codeView}:${state.diffParent}`);

  function setCodeView(key) {
    const [view, idx] = key.split(':');
    state.codeView = view;
    state.diffParent = Number(idx || 0);
    drawCode();
  }

  // d: code -> unified -> side by side -> (the next parent's) ... -> code
  function cycleCodeView() {
    const d = state.detail, diffs = (d && d.diffs) || [];
    if (!diffs.length) return;
    const keys = ['code'];
    diffs.forEach((_, i) => keys.push(`unified:${i}`, `split:${i}`));
    setCodeView(keys[(keys.indexOf(currentViewKey()) + 1) % keys.length]);
  }

  function drawCode() {
    const d = state.detail, n = state.byId.get(state.selected);
    if (!n) return;
    const code = $('detail-code'), diffBox = $('detail-diff');
    const diffs = (d && d.diffs) || [], df = diffs[state.diffParent];
    if (state.codeView !== 'code' && !df) state.codeView = 'code';
    drawCodeViews(n, d);
    const showCode = state.codeView === 'code';
    code.hidden = !showCode;
    diffBox.hidden = showCode;
    const wrap = $('code-wrap').checked;
    code.classList.toggle('wrap', wrap);
    diffBox.classList.toggle('wrap', wrap);
    if (showCode) {
      const inner = code.firstElementChild;
      const none = n.kind === 'running' ? '(not written yet)' : '(not available)';
      if (d && d.code_html) inner.innerHTML = d.code_html;  // pygments' output: escaped, spans only
      else inner.textContent = d ? '(no code yet)' : none;
      return;
    }
    diffBox.textContent = '';
    diffBox.appendChild(state.codeView === 'split' ? splitDiff(df) : unifiedDiff(df));
  }

  function diffCell(cls, text) { return el('td', cls, text === null || text === undefined ? '' : text); }

  function unifiedDiff(df) {
    const table = el('table', 'diff unified');
    table.dataset.parent = String(df.parent);
    if (!df.hunks.length) {
      const tr = el('tr');
      tr.appendChild(el('td', 'same', 'the code is the same as the parent\'s'));
      table.appendChild(tr);
    }
    for (const h of df.hunks) {
      const head = el('tr', 'hunk');
      head.appendChild(el('td', null, h.header)).colSpan = 3;
      table.appendChild(head);
      for (const ln of h.lines) {
        const tr = el('tr', ln.tag === '+' ? 'add' : ln.tag === '-' ? 'del' : 'ctx');
        tr.append(diffCell('no', ln.old), diffCell('no', ln.new), diffCell('code', `${ln.tag} ${ln.text}`));
        table.appendChild(tr);
      }
    }
    if (df.cut) table.appendChild(el('caption', 'dim', df.cut));
    return table;
  }

  // Side by side: within each hunk, a run of removed lines faces the run of added lines after it.
  function splitDiff(df) {
    const table = el('table', 'diff split');
    table.dataset.parent = String(df.parent);
    for (const h of df.hunks) {
      const head = el('tr', 'hunk');
      head.appendChild(el('td', null, h.header)).colSpan = 4;
      table.appendChild(head);
      let dels = [], adds = [];
      const flush = () => {
        for (let i = 0; i < Math.max(dels.length, adds.length); i++) {
          const a = dels[i], b = adds[i], tr = el('tr', 'pair');
          tr.append(diffCell('no', a && a.old), diffCell(a ? 'code del' : 'code empty', a && a.text),
            diffCell('no', b && b.new), diffCell(b ? 'code add' : 'code empty', b && b.text));
          table.appendChild(tr);
        }
        dels = []; adds = [];
      };
      for (const ln of h.lines) {
        if (ln.tag === '-') { if (adds.length) flush(); dels.push(ln); } else if (ln.tag === '+') adds.push(ln);
        else {
          flush();
          const tr = el('tr', 'ctx');
          tr.append(diffCell('no', ln.old), diffCell('code', ln.text), diffCell('no', ln.new), diffCell('code', ln.text));
          table.appendChild(tr);
        }
      }
      flush();
    }
    if (df.cut) table.appendChild(el('caption', 'dim', df.cut));
    return table;
  }

  Object.assign(podiumViewer, { setCodeView, cycleCodeView, drawCode });
})();
