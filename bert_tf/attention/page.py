"""The attention page: one self-contained HTML file (no server, no network:
its script, style and data are inline) with a head view, a model view and,
given two models, their per-head change and any head side by side.

The probabilities travel as bytes (255 = 1; 1/255 is finer than a line's
shade), zlib-compressed and base64-encoded, one blob per input and model;
the page inflates them with the browser's DecompressionStream. The
divergences are the float64 values `divergence.head_divergence` computed
from the float32 maps. Everything untrusted in it (word pieces, names) is
data: the JSON is escaped so it cannot end its script element, the script
puts text in with `textContent`, and the Content-Security-Policy runs only
the page's own script (by hash) and allows no request.

Example:
    html = build([before, after], ["pre-trained", "fine-tuned"], per_input)
"""

import base64
import hashlib
import html
from importlib import resources
import json
import zlib

import numpy as np

_TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{policy}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>{title}</title>
<style>{style}</style>
</head>
<body>
<header><h1 id="title"></h1><p id="sources"></p></header>
<nav id="controls">
  <span id="tabs"></span>
  <label id="example-control">input <select id="example"></select></label>
  <label id="source-control">model <select id="source"></select></label>
  <label id="layer-control">layer <select id="layer"></select></label>
  <label><input type="checkbox" id="hide-special"> hide [CLS]/[SEP]</label>
  <label><input type="checkbox" id="merge"> words, not pieces</label>
  <span id="heads" title="click: show/hide a head; double-click: only it">
  </span>
</nav>
<p id="help"></p>
<main id="view"></main>
<div id="overlay" hidden></div>
<script id="attention-data" type="application/json">{data}</script>
<script>{script}</script>
</body>
</html>
"""


def quantize(attentions):
  """The bytes the page draws: round(p * 255)."""
  return np.round(np.clip(attentions, 0.0, 1.0) * 255).astype(np.uint8)


def _blob(attentions):
  raw = zlib.compress(quantize(attentions).tobytes(), 9)
  return base64.b64encode(raw).decode("ascii")


def page_data(sources, labels, per_input=None, title=None):
  """The page's JSON: layers, heads, every input's word pieces, segments
  and maps (one per model), and the divergences when comparing."""
  first = sources[0]
  return {
    "title": title or "Attention: %s" % " / ".join(labels),
    "sources": list(labels),
    "layers": [first.layer_name(i) for i in range(len(first.layers))],
    "heads": first.num_heads,
    "examples": [
      {
        "name": example.name,
        "tokens": example.tokens,
        "segments": example.segments,
        "maps": [_blob(maps.examples[n].attentions) for maps in sources],
      }
      for n, example in enumerate(first.examples)
    ],
    "divergence": None
    if per_input is None
    else {"mean": per_input.mean(0).tolist(), "inputs": per_input.tolist()},
  }


def _digest(text):
  sha = hashlib.sha256(text.encode("utf-8")).digest()
  return "'sha256-%s'" % base64.b64encode(sha).decode("ascii")


def build(sources, labels, per_input=None, title=None):
  """The page (a str) of one model's maps, or of two (`sources` before,
  after) with their [inputs, layers, heads] divergences `per_input`."""
  data = page_data(sources, labels, per_input, title)
  # "<" escaped: a word piece "</script>" stays inside the JSON.
  text = json.dumps(data, separators=(",", ":")).replace("<", "\\u003c")
  folder = resources.files(__package__)
  script = "\n".join(
    folder.joinpath(name).read_text(encoding="utf-8")
    for name in ("views.js", "page.js")
  )
  style = folder.joinpath("page.css").read_text(encoding="utf-8")
  policy = "default-src 'none'; script-src %s; style-src %s; img-src data:" % (
    _digest(script),
    _digest(style),
  )
  return _TEMPLATE.format(
    policy=policy,
    title=html.escape(data["title"]),
    style=style,
    data=text,
    script=script,
  )
