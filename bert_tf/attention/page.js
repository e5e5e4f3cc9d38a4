// The attention page's script (bert_tf/attention/page.py inlines it after
// views.js): reads the JSON data block, sets up the controls and redraws the
// current view. Text from the data goes in with textContent, never as HTML.

const SVG_NS = 'http://www.w3.org/2000/svg';
const SVG_TAGS = new Set(['svg', 'g', 'line', 'text', 'rect']);
const VIEWS = { head: 'head view', model: 'model view', compare: 'before/after' };
const HELP = {
  head: 'Lines join each query token (left) to the tokens it attends to ' +
    '(right); darker = more attention. Hover a token to keep only its lines.',
  model: 'Every layer (rows) and head (columns) of the input; click one ' +
    'to enlarge it.',
  compare: 'Each head\'s change: Jensen-Shannon divergence (bits) of its ' +
    'attention rows, before vs after. A layer frozen with all below it ' +
    'shows exactly 0. Click a head to see both patterns.',
};

const data = JSON.parse(document.getElementById('attention-data').textContent);
const state = {
  view: 'head', example: 0, source: 0, layer: 0, hideSpecial: false,
  merge: false, heads: new Set(range(data.heads)),
  scope: 'mean', cell: null,
};
let maps = []; // maps[example][source]: Uint8Array [layers, heads, T, T]

function range(n) { return Array.from({ length: n }, (_, i) => i); }

function el(tag, attrs, parent, text) {
  const node = SVG_TAGS.has(tag) ?
    document.createElementNS(SVG_NS, tag) : document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    node.setAttribute(key, value);
  }
  if (text !== undefined) node.textContent = text;
  if (parent) parent.appendChild(node);
  return node;
}

function color(head) { return `hsl(${(head * 137.5) % 360}, 70%, 42%)`; }

async function inflate(b64) {
  const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  const stream = new Blob([bytes]).stream()
    .pipeThrough(new DecompressionStream('deflate'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

function swatches() {
  const box = document.getElementById('heads');
  box.replaceChildren();
  for (const head of range(data.heads)) {
    const swatch = el('span', {
      class: 'swatch' + (state.heads.has(head) ? '' : ' hidden-head'),
      'data-head': head, title: `head ${head}`,
    }, box, String(head));
    swatch.style.background = color(head);
    swatch.addEventListener('click', () => {
      if (state.heads.has(head)) state.heads.delete(head);
      else state.heads.add(head);
      render();
    });
    swatch.addEventListener('dblclick', () => {
      state.heads = new Set([head]);
      render();
    });
  }
}

function render() {
  const view = document.getElementById('view');
  view.replaceChildren();
  for (const button of document.querySelectorAll('#tabs button')) {
    button.classList.toggle('on', button.dataset.view === state.view);
  }
  document.getElementById('help').textContent = HELP[state.view];
  document.getElementById('layer-control').hidden = state.view !== 'head';
  document.getElementById('heads').hidden = state.view !== 'head';
  document.getElementById('source-control').hidden =
    data.sources.length < 2 || state.view === 'compare';
  swatches();
  syncControls();
  if (state.view === 'head') {
    view.appendChild(headView(state.source, state.layer, [...state.heads]));
  } else if (state.view === 'model') {
    modelView(view);
  } else {
    compareView(view);
  }
}

function select(id, options, value, onChange) {
  const node = document.getElementById(id);
  options.forEach((text, i) => el('option', { value: i }, node, text));
  node.value = value;
  node.addEventListener('change', () => {
    onChange(Number(node.value));
    render();
  });
  return node;
}

function setUp() {
  document.getElementById('title').textContent = data.title;
  document.getElementById('sources').textContent = data.sources.length > 1 ?
    `before: ${data.sources[0]} · after: ${data.sources[1]}` : data.sources[0];
  const tabs = document.getElementById('tabs');
  for (const [view, name] of Object.entries(VIEWS)) {
    if (view === 'compare' && !data.divergence) continue;
    const button = el('button', { 'data-view': view }, tabs, name);
    button.addEventListener('click', () => {
      state.view = view;
      render();
    });
  }
  select('example', data.examples.map(
    (e) => `${e.name}: ${e.tokens.slice(1, 9).join(' ')}`), 0,
  (i) => { state.example = i; });
  document.getElementById('example-control').hidden = data.examples.length < 2;
  select('source', data.sources, 0, (i) => { state.source = i; });
  select('layer', data.layers.map((name) => `layer ${name}`), 0,
    (i) => { state.layer = i; });
  for (const [id, key] of [['hide-special', 'hideSpecial'],
    ['merge', 'merge']]) {
    const box = document.getElementById(id);
    box.addEventListener('change', () => {
      state[key] = box.checked;
      render();
    });
  }
  const overlay = document.getElementById('overlay');
  overlay.addEventListener('click', closeOverlay);
  document.addEventListener('keydown', (event) => {
    if (event.key === 'Escape') closeOverlay();
  });
  viewFromHash();
  window.addEventListener('hashchange', () => {
    viewFromHash();
    render();
  });
}

// The address's fragment opens a view and sets its controls, e.g.
// #head&layer=5&heads=0,3&words=1 (also input=N, model=N, special=0).
function viewFromHash() {
  const [view, ...pairs] = location.hash.slice(1).split('&');
  if (view in VIEWS && (view !== 'compare' || data.divergence)) {
    state.view = view;
  }
  const index = (value, count) => {
    const n = Number(value);
    return Number.isInteger(n) && n >= 0 && n < count ? n : null;
  };
  for (const pair of pairs) {
    const [key, value = ''] = pair.split('=');
    if (key === 'layer') state.layer = index(value, data.layers.length) ?? 0;
    if (key === 'input') {
      state.example = index(value, data.examples.length) ?? 0;
    }
    if (key === 'model') state.source = index(value, data.sources.length) ?? 0;
    if (key === 'heads') {
      state.heads = new Set(value.split(',').map((h) => index(h, data.heads))
        .filter((h) => h !== null));
    }
    if (key === 'words') state.merge = value === '1';
    if (key === 'special') state.hideSpecial = value === '0';
  }
}

// The controls show the state (after the fragment set it).
function syncControls() {
  document.getElementById('example').value = state.example;
  document.getElementById('source').value = state.source;
  document.getElementById('layer').value = state.layer;
  document.getElementById('merge').checked = state.merge;
  document.getElementById('hide-special').checked = state.hideSpecial;
}

async function main() {
  setUp();
  try {
    maps = await Promise.all(data.examples.map(
      (e) => Promise.all(e.maps.map(inflate))));
  } catch (error) {
    el('p', { class: 'error' }, document.getElementById('view'),
      `cannot read the attention data: ${error}`);
    return;
  }
  render();
  document.body.dataset.ready = 'true'; // for screenshots and tests
}

main();
