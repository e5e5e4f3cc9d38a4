// The attention page's views (bert_tf/attention/page.py inlines this file
// before page.js): the head view, the model view and the before/after view,
// drawn from page.js's `data`, `state` and `maps`.
'use strict';

const MIN_WEIGHT = 0.01; // lighter lines are not drawn
const SPECIAL = new Set(['[CLS]', '[SEP]']);
const ROW = 18; // pixels per token in a head view

// The tokens shown: word pieces, or words (a piece "##x" joins the one
// before it), without [CLS]/[SEP] when hidden; each lists its pieces.
function shownTokens(example) {
  const { tokens, segments } = data.examples[example];
  const shown = [];
  tokens.forEach((token, i) => {
    const last = shown[shown.length - 1];
    if (state.merge && token.startsWith('##') && last &&
        !SPECIAL.has(last.text)) {
      last.pieces.push(i);
      last.text += token.slice(2);
    } else {
      shown.push({ pieces: [i], text: token, segment: segments[i] });
    }
  });
  return state.hideSpecial ? shown.filter((t) => !SPECIAL.has(t.text)) : shown;
}

// Attention between shown tokens: a word receives the sum over its pieces
// and gives the mean over its pieces.
function matrix(example, source, layer, head, shown) {
  const size = data.examples[example].tokens.length;
  const bytes = maps[example][source];
  const base = (layer * data.heads + head) * size * size;
  return shown.map((q) => shown.map((k) => {
    let sum = 0;
    for (const i of q.pieces) {
      for (const j of k.pieces) sum += bytes[base + i * size + j];
    }
    return sum / 255 / q.pieces.length;
  }));
}

// Query tokens left, key tokens right, a line per weight >= MIN_WEIGHT in
// each head's colour; segment A/B marked beside the tokens.
function headView(source, layer, heads, width = 440) {
  const shown = shownTokens(state.example);
  const left = width / 2 - 70; const right = width / 2 + 70;
  const y = (i) => 14 + i * ROW;
  const svg = el('svg', {
    class: 'head-view', width, height: shown.length * ROW + 14,
    'data-layer': layer, 'data-source': source,
  });
  for (const [x, anchor] of [[4, 'start'], [width - 4, 'end']]) {
    let start = 0;
    shown.forEach((token, i) => {
      const next = shown[i + 1];
      if (next && next.segment === token.segment) return;
      el('rect', {
        class: 'segment', x: x - (anchor === 'end' ? 6 : 0), width: 6,
        y: y(start) - ROW / 2 + 1, height: (i - start + 1) * ROW - 2,
      }, svg);
      el('text', {
        class: 'segment-label', x: x + (anchor === 'end' ? -10 : 10),
        y: y(start), 'text-anchor': anchor, 'dominant-baseline': 'middle',
      }, svg, token.segment ? 'B' : 'A');
      start = i + 1;
    });
  }
  const lines = el('g', { class: 'lines' }, svg);
  for (const head of heads) {
    matrix(state.example, source, layer, head, shown).forEach((row, q) => {
      row.forEach((weight, k) => {
        if (weight < MIN_WEIGHT) return;
        el('line', {
          x1: left + 4, y1: y(q), x2: right - 4, y2: y(k),
          stroke: color(head), 'stroke-width': 2,
          'stroke-opacity': weight.toFixed(3),
          'data-q': q, 'data-k': k, 'data-head': head,
        }, lines);
      });
    });
  }
  for (const side of ['q', 'k']) {
    shown.forEach((token, i) => {
      const text = el('text', {
        class: `token ${side} seg${token.segment}`, 'data-i': i,
        x: side === 'q' ? left : right, y: y(i),
        'text-anchor': side === 'q' ? 'end' : 'start',
        'dominant-baseline': 'middle',
      }, svg, token.text);
      text.addEventListener('mouseenter', () => focus(svg, side, i));
      text.addEventListener('mouseleave', () => focus(svg, null, -1));
    });
  }
  return svg;
}

// Keeps only the lines of token `i` on `side` ('q' or 'k'); null: all.
function focus(svg, side, i) {
  for (const line of svg.querySelectorAll('line')) {
    line.classList.toggle('off', side !== null &&
      line.getAttribute('data-' + side) !== String(i));
  }
  for (const text of svg.querySelectorAll('text.token')) {
    text.classList.toggle('focus', side !== null &&
      text.classList.contains(side) && text.dataset.i === String(i));
  }
}

function thumbnail(layer, head, shown) {
  const height = Math.max(48, Math.min(150, shown.length * 3));
  const canvas = el('canvas', {
    width: 64, height, 'data-layer': layer, 'data-head': head,
    title: `layer ${data.layers[layer]}, head ${head}`,
  });
  const context = canvas.getContext('2d');
  const y = (i) => 3 + (i + 0.5) * (height - 6) / shown.length;
  context.strokeStyle = color(head);
  matrix(state.example, state.source, layer, head, shown)
    .forEach((row, q) => row.forEach((weight, k) => {
      if (weight < MIN_WEIGHT) return;
      context.globalAlpha = weight;
      context.beginPath();
      context.moveTo(6, y(q));
      context.lineTo(58, y(k));
      context.stroke();
    }));
  canvas.addEventListener('click', () => enlarge(layer, head));
  return canvas;
}

function modelView(view) {
  const shown = shownTokens(state.example);
  const table = el('table', { class: 'model-grid' }, view);
  const header = el('tr', {}, table);
  el('th', {}, header);
  for (const head of range(data.heads)) el('th', {}, header, `head ${head}`);
  data.layers.forEach((name, layer) => {
    const row = el('tr', {}, table);
    el('th', {}, row, `layer ${name}`);
    for (const head of range(data.heads)) {
      el('td', {}, row).appendChild(thumbnail(layer, head, shown));
    }
  });
}

function enlarge(layer, head) {
  const overlay = document.getElementById('overlay');
  overlay.replaceChildren();
  const card = el('div', { class: 'card' }, overlay);
  el('div', { class: 'caption' }, card,
    `layer ${data.layers[layer]}, head ${head} ` +
    `(${data.sources[state.source]}) — click or Esc to close`);
  card.appendChild(headView(state.source, layer, [head], 520));
  overlay.hidden = false;
}

function closeOverlay() { document.getElementById('overlay').hidden = true; }

function format(value) { return value === 0 ? '0' : value.toPrecision(2); }

function compareView(view) {
  const values = state.scope === 'mean' ?
    data.divergence.mean : data.divergence.inputs[state.example];
  const top = Math.max(...values.flat()) || 1;
  if (!state.cell) {
    const flat = data.divergence.mean.flat();
    const best = flat.indexOf(Math.max(...flat));
    state.cell = [Math.floor(best / data.heads), best % data.heads];
  }
  const scope = el('label', {}, view, 'divergence ');
  const select = el('select', { id: 'scope' }, scope);
  el('option', { value: 'mean' }, select,
    `averaged over ${data.examples.length} input(s)`);
  el('option', { value: 'input' }, select, 'of this input');
  select.value = state.scope;
  select.addEventListener('change', () => {
    state.scope = select.value;
    render();
  });
  const table = el('table', { class: 'heatmap' }, view);
  const header = el('tr', {}, table);
  el('th', {}, header);
  for (const head of range(data.heads)) el('th', {}, header, `head ${head}`);
  values.forEach((row, layer) => {
    const tr = el('tr', {}, table);
    el('th', {}, tr, `layer ${data.layers[layer]}`);
    row.forEach((value, head) => {
      const td = el('td', {
        'data-layer': layer, 'data-head': head, 'data-value': String(value),
        title: String(value),
      }, tr, format(value));
      td.style.background = `rgba(200, 30, 30, ${(value / top).toFixed(3)})`;
      td.style.color = value > 0.6 * top ? '#fff' : '#222';
      if (layer === state.cell[0] && head === state.cell[1]) {
        td.classList.add('picked');
      }
      td.addEventListener('click', () => {
        state.cell = [layer, head];
        render();
      });
    });
  });
  const still = data.layers.filter(
    (_, layer) => data.divergence.mean[layer].every((v) => v === 0));
  el('div', { class: 'caption', id: 'unchanged' }, view,
    `layers without any change (frozen): ${still.join(', ') || 'none'}`);
  const [layer, head] = state.cell;
  el('div', { class: 'caption' }, view,
    `layer ${data.layers[layer]}, head ${head}: ` +
    `${format(data.divergence.inputs[state.example][layer][head])} on ` +
    `${data.examples[state.example].name}, ` +
    `${format(data.divergence.mean[layer][head])} averaged`);
  const pair = el('div', { class: 'pair' }, view);
  data.sources.forEach((label, source) => {
    const figure = el('figure', {}, pair);
    el('figcaption', {}, figure, label);
    figure.appendChild(headView(source, layer, [head], 400));
  });
}
