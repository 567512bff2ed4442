// The overview (minimap): the whole graph small, and the part of it in view.
(() => {
  'use strict';
  const { $, state, kx, ky, gx, gy, graphW, graphH, paneSize } = podiumViewer;

  // The overview draws the graph as the fitted view does: the layers spread by the fit's
  // stretch (as far as the overview's height allows), so a wide, shallow tree is not a line.
  function minimapScale() {
    const c = $('minimap');
    const fitX = (c.width - 8) / graphW(), fitY = (c.height - 8) / graphH();
    const sx = Math.min(fitX, fitY), sy = Math.min(fitY, sx * state.view.stretch);
    return { sx, sy, ox: (c.width - graphW() * sx) / 2, oy: (c.height - graphH() * sy) / 2 };
  }

  // Shown only while part of the graph is out of view.
  function drawMinimap() {
    const c = $('minimap'), ctx = c.getContext('2d');
    if (!ctx) return;
    ctx.clearRect(0, 0, c.width, c.height);
    const { w, h } = paneSize();
    const x0 = state.view.tx, y0 = state.view.ty;
    const inView = x0 >= -1 && y0 >= -1 && x0 + graphW() * kx() <= w + 1 && y0 + graphH() * ky() <= h + 1;
    c.hidden = !state.nodes.length || inView;
    if (c.hidden) return;
    const { sx: mx, sy: my, ox, oy } = minimapScale();
    ctx.drawImage(minimapNodes(c, mx, my, ox, oy), 0, 0);
    ctx.strokeStyle = '#0969da';
    ctx.lineWidth = 1.5;
    ctx.strokeRect(ox + (-state.view.tx / kx()) * mx, oy + (-state.view.ty / ky()) * my,
      (w / kx()) * mx, (h / ky()) * my);
  }

  // The overview's nodes, drawn once per change of the graph (not per pan: a pan only moves
  // the rectangle over them).
  let minimapCache = { key: null, canvas: null };
  function minimapNodes(c, mx, my, ox, oy) {
    const key = [state.run && state.run.version, state.hidden.size, mx, my, c.width, c.height].join('|');
    if (minimapCache.key === key) return minimapCache.canvas;
    const canvas = document.createElement('canvas');
    canvas.width = c.width;
    canvas.height = c.height;
    const ctx = canvas.getContext('2d');
    for (const n of state.nodes) {
      if (state.hidden.has(n.id)) continue;
      const col = state.colour.get(n.id);
      ctx.fillStyle = col ? col.fill : { buggy: '#cf222e', running: '#bf8700', analysis: '#8250df' }[n.kind] || '#8c959f';
      const size = n.on_best_path ? 3 : 2;
      ctx.fillRect(ox + gx(n) * mx - 1, oy + gy(n) * my - 1, size, size);
    }
    minimapCache = { key, canvas };
    return canvas;
  }


  Object.assign(podiumViewer, { minimapScale, drawMinimap });
})();
