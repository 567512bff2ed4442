// The view: zoom, stretch and pan, by the buttons, the wheel, a drag or the overview.
(() => {
  'use strict';
  const { $, state, SLOT_W, SLOT_H, kx, ky, sx, sy, graphW, graphH, paneSize, lodFor, placeNodes,
    scheduleTags, drawTags, minimapScale, drawMinimap } = podiumViewer;

  const MAX_ZOOM = 3, MIN_ZOOM = 0.002;

  // The whole graph in the pane: as large as its width allows (at most 100%), the layers spread
  // over the pane's height when there is room.
  function fit() {
    if (!state.run || !state.nodes.length) return;
    const { w, h } = paneSize(), pad = 24;
    const zx = (w - pad) / graphW(), zy = (h - pad) / graphH();
    const z = Math.max(MIN_ZOOM, Math.min(1, zx, zy));
    const wantY = Math.min(zy, Math.max(z, 1));
    state.view.stretch = zy > z ? Math.max(1, wantY / z) : 1;
    state.view.z = z;
    state.view.tx = (w - graphW() * kx()) / 2;
    state.view.ty = (h - graphH() * ky()) / 2;
    state.fitted = true;
    redrawView();
  }

  // Zoom by ``factor`` keeping the point (px, py) of the pane where it is.
  function zoomBy(factor, px, py) {
    const { w, h } = paneSize();
    const ax = px ?? w / 2, ay = py ?? h / 2;
    const gxa = (ax - state.view.tx) / kx(), gya = (ay - state.view.ty) / ky();
    state.view.z = Math.min(MAX_ZOOM, Math.max(MIN_ZOOM, state.view.z * factor));
    state.view.tx = ax - gxa * kx();
    state.view.ty = ay - gya * ky();
    redrawView();
  }

  function setZoom(z) { zoomBy(z / state.view.z); }

  function panBy(dx, dy) {
    state.view.tx += dx;
    state.view.ty += dy;
    applyPan();
  }

  // Centre the view on a node if it is not well inside it.
  function scrollToNode(id) {
    const n = state.byId.get(id);
    if (n && n.x !== null) {
      const { w, h } = paneSize(), x = sx(n), y = sy(n), m = 40;
      if (x < m || x > w - m || y < m || y > h - m) {
        state.view.tx += w / 2 - x;
        state.view.ty += h / 2 - y;
        redrawView();
      }
    }
    const row = document.querySelector(`#node-list tr[data-node-id="${id}"]`), list = $('list-pane');
    if (row && !row.hidden && (row.offsetTop < list.scrollTop + 30
        || row.offsetTop + row.offsetHeight > list.scrollTop + list.clientHeight)) {
      list.scrollTop = row.offsetTop - list.clientHeight / 2;
    }
  }

  function applyPan() {
    const d = state.drawnAt;
    if (!d) return;
    const t = `translate(${state.view.tx - d.tx},${state.view.ty - d.ty})`;
    $('node-layer').setAttribute('transform', t);
    $('label-layer').setAttribute('transform', t);
    $('edge-layer').setAttribute('transform',
      `matrix(${kx()} 0 0 ${ky()} ${state.view.tx} ${state.view.ty})`);
    scheduleTags();
    drawMinimap();
  }

  let viewFrame = 0;
  function redrawView() {
    if (viewFrame) return;
    viewFrame = requestAnimationFrame(() => {
      viewFrame = 0;
      const lod = lodFor();
      const g = $('graph');
      g.classList.remove('lod-box', 'lod-chip', 'lod-dot');
      g.classList.add('lod-' + lod);
      state.lod = lod;
      const r = Math.max(3, Math.min(7, Math.min(SLOT_W * kx(), SLOT_H * ky()) * 0.3));
      g.style.setProperty('--dot-r', r.toFixed(1) + 'px');
      $('zoom-reset').textContent = Math.round(state.view.z * 100) + '%';
      placeNodes();
      drawMinimap();
      drawTags();
      window.performance.mark('podium:view-drawn');
    });
  }

  // Centre the view on the graph point under a click or drag on the minimap.
  function minimapGoto(e) {
    const box = $('minimap').getBoundingClientRect(), { sx: mx, sy: my, ox, oy } = minimapScale();
    const gxp = (e.clientX - box.left - ox) / mx, gyp = (e.clientY - box.top - oy) / my;
    const { w, h } = paneSize();
    state.view.tx = w / 2 - gxp * kx();
    state.view.ty = h / 2 - gyp * ky();
    redrawView();
  }

  Object.assign(podiumViewer, { fit, zoomBy, setZoom, panBy, scrollToNode, redrawView,
    minimapGoto });
})();
