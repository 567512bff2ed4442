// Reading an export's node details: packing.py's pack, undone (its unpack, in JavaScript).
(() => {
  'use strict';

  // An export's node details, packed (podium/viewer/packing.py): long text fields are lists of
  // chunks stored once. Parsed on first use, so the graph is drawn without reading them.
  function packedDetails(script) {
    let details = null;
    const text = (chunks, v) => (v && typeof v === 'object' && Array.isArray(v.$c)
      ? v.$c.map((i) => chunks[i]).join('') : v);
    const unpack = (chunks, d) => {
      const out = { ...d };
      for (const k of ['plan', 'code', 'code_html', 'output']) out[k] = text(chunks, d[k]);
      if (d.exec) out.exec = { ...d.exec, traceback: text(chunks, d.exec.traceback) };
      if (d.notebook) {
        out.notebook = { ...d.notebook, cells: (d.notebook.cells || []).map((c) => ({
          ...c, source: text(chunks, c.source), output: text(chunks, c.output),
          error: c.error ? { ...c.error, traceback: text(chunks, c.error.traceback) } : c.error,
        })) };
      }
      out.calls = (d.calls || []).map((c) => ({
        ...c, messages: (c.messages || []).map((m) => ({ ...m, content: text(chunks, m.content) })),
        response: c.response ? { ...c.response, text: text(chunks, c.response.text) } : c.response,
      }));
      return out;
    };
    return () => {
      if (details === null) {
        const data = script ? JSON.parse(script.textContent) : { chunks: [], details: {} };
        details = new Map(Object.entries(data.details || {})
          .map(([id, d]) => [id, () => unpack(data.chunks || [], d)]));
      }
      return details;
    };
  }

  Object.assign(podiumViewer, { packedDetails });
})();
