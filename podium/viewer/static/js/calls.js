// A node's model calls: every message sent and the answer, long ones folded.
(() => {
  'use strict';
  const { el, fmtInt, fmtCost, fmtSecs } = podiumViewer;

  const FOLD_CHARS = 1500, FOLD_LINES = 30;  // longer prompts and answers start folded

  // Text in a <pre>; a long one folded in a <details> whose summary is its first line.
  function folded(text) {
    const pre = el('pre', 'wrap', text || ''), lines = pre.textContent.split('\n').length;
    if (pre.textContent.length <= FOLD_CHARS && lines <= FOLD_LINES) return pre;
    const det = el('details', 'fold');
    const first = pre.textContent.trimStart().split('\n')[0].slice(0, 120);
    det.append(el('summary', null,
      `${first} … (${fmtInt(pre.textContent.length)} chars, ${fmtInt(lines)} lines)`), pre);
    return det;
  }

  function drawCall(c) {
    const det = el('details', 'call'), r = c.response;
    det.open = true;
    det.dataset.role = c.role;
    const bits = [`${c.role} call`, `seq ${c.seq}`, c.model];
    if (r) {
      bits.push(`${fmtInt(r.input_tokens)} in / ${fmtInt(r.output_tokens)} out`,
        fmtCost(r.cost_usd), fmtSecs(r.latency_s), r.finish, r.replayed && 'replayed');
    }
    if (c.attempts > 1) bits.push(`${c.attempts} attempts`);
    if (c.error) bits.push(c.fatal ? 'fatal error' : 'error');
    det.appendChild(el('summary', null, bits.filter(Boolean).join(' · ')));
    for (const m of c.messages) {
      const msg = el('div', 'message');
      msg.dataset.role = m.role;
      msg.append(el('div', 'role', m.role), folded(m.content));
      det.appendChild(msg);
    }
    if (c.tools && c.tools.length) det.appendChild(el('p', 'dim', 'tools offered: ' + c.tools.join(', ')));
    if (c.error) det.appendChild(el('div', 'call-error', c.error));
    const resp = el('div', 'response');
    resp.appendChild(el('div', 'role', r ? 'response' + (r.replayed ? ' (replayed)' : '') : 'no response'));
    if (r && r.text) resp.appendChild(folded(r.text));
    if (r && r.tool_call) {
      resp.append(el('div', 'tool', `→ ${r.tool_call.name}(…)`),
        folded(JSON.stringify(r.tool_call.arguments, null, 2)));
    }
    det.appendChild(resp);
    return det;
  }

  Object.assign(podiumViewer, { drawCall });
})();
