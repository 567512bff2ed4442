// Graph units to screen pixels. The server places the nodes (x in slots, y in layers:
// podium/viewer/layout.py); the page maps them to the screen with a zoom (x) and a stretch of
// the layers (y) that relaxes to 1:1 as one zooms in.
(() => {
  'use strict';
  const { $, state } = podiumViewer;

  const SLOT_W = 130, SLOT_H = 84, MARGIN = 36;  // graph units of one slot, one layer
  const BOX = { w: 104, h: 40 }, CHIP = { w: 54, h: 20 };  // on-screen sizes (style.css too)

  // kx = z; ky = z stretched (the layers spread to fill the pane at fit), the stretch fading to
  // none by z = 1, so a close view is never distorted.
  const kx = () => state.view.z;
  const ky = () => Math.min(state.view.z * state.view.stretch, Math.max(state.view.z, 1));
  const gx = (n) => MARGIN + n.x * SLOT_W;
  const gy = (n) => MARGIN + n.y * SLOT_H;
  const sx = (n) => gx(n) * kx() + state.view.tx;
  const sy = (n) => gy(n) * ky() + state.view.ty;
  const graphW = () => 2 * MARGIN + (state.run ? state.run.layout.width : 0) * SLOT_W;
  const graphH = () => 2 * MARGIN + (state.run ? state.run.layout.depth : 0) * SLOT_H;

  function paneSize() {
    const pane = $('graph-pane');
    return { w: pane.clientWidth, h: pane.clientHeight };
  }

  function lodFor() {
    const w = SLOT_W * kx(), h = SLOT_H * ky();
    if (w >= BOX.w + 12 && h >= BOX.h + 14) return 'box';
    if (w >= CHIP.w + 4 && h >= CHIP.h + 6) return 'chip';
    return 'dot';
  }

  Object.assign(podiumViewer, { SLOT_W, SLOT_H, CHIP, kx, ky, gx, gy, sx, sy, graphW, graphH,
    paneSize, lodFor });
})();
