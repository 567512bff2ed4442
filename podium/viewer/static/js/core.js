// Podium run viewer: one agent run's search graph, its metric over time, its nodes in full, and
// live updates. Plain ES2020, no dependencies, nothing from the network. Every string that
// comes from the run is set as text (textContent); the one HTML string inserted is code_html,
// pygments' already-escaped highlighting. No eval, no inline handlers: the page's CSP forbids
// them.
//
// The script is the files of static/js/, one job each, run in the order that page.py's
// APP_MODULES declares (the live page gets them as one /static/app.js; an export inlines the
// same text). Each file is one function run once: it takes what it needs from podiumViewer
// (only what the files before it put there: a file never reaches forward) and puts its own
// interface there with one Object.assign at its end. This one holds what every other needs:
// the page's state, $ and the element builders.
const podiumViewer = {};

(() => {
  'use strict';

  const SVG_NS = 'http://www.w3.org/2000/svg';
  const $ = (id) => document.getElementById(id);
  const narrow = window.matchMedia('(max-width: 900px)');  // style.css: one column

  const state = {
    run: null,            // RunJSON as last received
    nodes: [],            // its nodes, in id order
    byId: new Map(),      // id -> LightNode
    children: new Map(),  // id -> [child ids]
    colour: new Map(),    // id -> {fill, dark} for good nodes (the metric scale)
    view: { z: 1, stretch: 1, tx: 0, ty: 0 },  // graph units -> screen: see kx/ky
    drawnAt: null,        // the view the node layer's positions were computed for
    lod: 'box',
    fitted: false,        // false until the first fit (the user's zoom is kept after it)
    selected: null,       // the open node's id
    cursor: null,         // the keyboard cursor (j/k), a node id
    shownSig: null,       // the open node's signature when its detail was drawn
    detail: null,         // the open node's NodeDetail
    codeView: 'code',     // code | unified | split
    diffParent: 0,        // which parent's diff (index into detail.diffs)
    matches: null,        // ids matching the text filter; null when there is none
    searchSeq: 0,
    collapsed: new Set(), // ids whose subtrees are folded away
    hidden: new Set(),    // ids inside a collapsed subtree
    sort: { key: 'id', dir: 1 },
    tab: 'list',
    chartX: 'step',
    started: false,
    outputTimer: null,
  };

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  function svg(tag, attrs, text) {
    const e = document.createElementNS(SVG_NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
    if (text !== undefined) e.textContent = text;
    return e;
  }

  Object.assign(podiumViewer, { $, narrow, state, el, svg });
})();
