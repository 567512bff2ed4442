// Where the run comes from: the live server (polled), or the data embedded in an exported file.
// Both answer the same four questions: the run, a node, a running node's output, a search.
(() => {
  'use strict';
  const { $, state, signature, packedDetails } = podiumViewer;

  // The fields /api/search looks in: export mode searches the same ones locally.
  const searched = (d) => [d.plan, d.code, d.output, d.bug_reason, d.summary,
    d.exec && d.exec.error_name, d.exec && d.exec.error_value, d.exec && d.exec.traceback];

  function exportSource(run, detailsScript) {
    const all = packedDetails(detailsScript), cache = new Map();
    const get = (id) => {
      const key = String(id);
      if (!cache.has(key)) { const f = all().get(key); cache.set(key, f ? f() : null); }
      return cache.get(key);
    };
    return {
      live: false,
      run: async () => run,
      node: async (id) => get(id),
      output: async () => null,
      search: async (q) => {
        const needle = q.toLowerCase();
        return run.nodes.map((n) => n.id).filter((id) => searched(get(id) || state.byId.get(id)
          || {}).some((t) => typeof t === 'string' && t.toLowerCase().includes(needle)));
      },
    };
  }

  // The live server. URLs are relative: a sweep serves each run's page under /runs/<id>/.
  function liveSource() {
    let etag = null;
    const cache = new Map();  // id -> {sig, detail}: refetched when the node changes
    return {
      live: true,
      async run() {
        const headers = etag ? { 'If-None-Match': etag } : {};
        const r = await fetch('api/run', { headers, cache: 'no-store' });
        if (r.status === 304) return null;  // nothing new
        if (!r.ok) throw new Error(`GET api/run answered ${r.status}`);
        const data = await r.json();
        etag = r.headers.get('ETag');
        return data;
      },
      async node(id) {
        const light = state.byId.get(id), sig = light ? signature(light) : '';
        const hit = cache.get(id);
        if (hit && hit.sig === sig && light && light.kind !== 'running') return hit.detail;
        const r = await fetch(`api/node/${id}`, { cache: 'no-store' });
        if (!r.ok) return null;
        const detail = await r.json();
        cache.set(id, { sig, detail });
        return detail;
      },
      async output(id) {
        const r = await fetch(`api/node/${id}/output`, { cache: 'no-store' });
        return r.ok ? r.json() : null;
      },
      async search(q) {
        const r = await fetch('api/search?q=' + encodeURIComponent(q), { cache: 'no-store' });
        if (!r.ok) throw new Error(`GET api/search answered ${r.status}`);
        return (await r.json()).ids;
      },
    };
  }

  const embedded = $('podium-data');
  const source = embedded
    ? exportSource(JSON.parse(embedded.textContent), $('podium-details'))
    : liveSource();

  Object.assign(podiumViewer, { source });
})();
