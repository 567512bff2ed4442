// The run's nodes as a tree: indexed by id and by parent when a new RunJSON arrives, and which
// of them a collapsed subtree hides.
(() => {
  'use strict';
  const { state } = podiumViewer;

  function indexRun(run) {
    state.run = run;
    state.nodes = run.nodes;
    state.byId = new Map(run.nodes.map((n) => [n.id, n]));
    state.children = new Map();
    for (const n of run.nodes) {
      for (const p of n.parents) (state.children.get(p) || state.children.set(p, []).get(p)).push(n.id);
    }
    for (const id of [...state.collapsed]) if (!state.byId.has(id)) state.collapsed.delete(id);
    computeHidden();
  }

  function descendants(id) {
    const out = new Set(), todo = [...(state.children.get(id) || [])];
    while (todo.length) {
      const c = todo.pop();
      if (out.has(c)) continue;
      out.add(c);
      todo.push(...(state.children.get(c) || []));
    }
    return out;
  }

  // A node is hidden when it has parents and every one of them is collapsed or hidden.
  function computeHidden() {
    const hidden = new Set();
    for (const n of state.nodes) {  // id order: parents first
      const ps = n.parents.filter((p) => state.byId.has(p));
      if (ps.length && ps.every((p) => state.collapsed.has(p) || hidden.has(p))) hidden.add(n.id);
    }
    state.hidden = hidden;
  }

  Object.assign(podiumViewer, { indexRun, descendants, computeHidden });
})();
