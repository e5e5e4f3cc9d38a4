"""The PNG figures: an input's attention heads as a grid, and the per-head
change between two models as a heat map.

The grid gives each layer its own rows and each token about 13 pixels (at
100 dpi), so the word pieces stay legible when the image is shown whole:
heads wrap onto as many rows as keep the image about 1,600 pixels wide.

Example:
    figure = grid(tokens, attentions, ["0", "5"], heads=[0, 1])
    figure.savefig(f, format="png", dpi=DPI)
"""

import math

from matplotlib import figure as figure_lib
from matplotlib.backends import backend_agg
import numpy as np

from bert_tf.io_utils import InputError

DPI = 100
_WIDTH = 16.0  # inches: 1,600 pixels at DPI
_PER_TOKEN = 0.13  # inches per token on a panel's side
_MAX_LABELLED_TOKENS = 64  # more tick labels than this overlap


def _figure(width, height):
  figure = figure_lib.Figure(figsize=(width, height), layout="constrained")
  backend_agg.FigureCanvasAgg(figure)
  return figure


def grid(tokens, attentions, layer_names, heads=None, title=None):
  """A Figure of `attentions` [layers, heads, T, T]: each layer's heads on
  their own rows, row = query token, column = key token, one 0..1 scale."""
  num_heads = attentions.shape[1]
  heads = list(range(num_heads)) if heads is None else heads
  for head in heads:
    if not 0 <= head < num_heads:
      raise InputError(
        "--heads: %d is out of range for %d heads" % (head, num_heads)
      )
  labelled = len(tokens) <= _MAX_LABELLED_TOKENS
  margin = 0.9 if labelled else 0.3  # room for the token labels
  side = max(1.8, _PER_TOKEN * len(tokens)) if labelled else 2.5
  fit = max(1, int(_WIDTH // (side + margin)))
  columns = math.ceil(len(heads) / math.ceil(len(heads) / fit))
  per_layer = math.ceil(len(heads) / columns)
  rows = per_layer * len(layer_names)
  figure = _figure(
    (side + margin) * columns + 1.0,
    (side + margin + 0.3) * rows + (0.5 if title else 0.2),
  )
  axes = figure.subplots(rows, columns, squeeze=False)
  ticks = range(len(tokens)) if labelled else []
  names = [tokens[i] for i in ticks]
  for ax in axes.flat:
    ax.set_axis_off()
  for i, layer in enumerate(layer_names):
    for n, head in enumerate(heads):
      ax = axes[i * per_layer + n // columns, n % columns]
      ax.set_axis_on()
      image = ax.imshow(
        attentions[i, head],
        cmap="Blues",
        vmin=0.0,
        vmax=1.0,
        interpolation="nearest",
      )
      ax.set_title("layer %s, head %d" % (layer, head), fontsize=9)
      ax.set_xticks(ticks, names, rotation=90, fontsize=7)
      ax.set_yticks(ticks, names, fontsize=7)
  figure.colorbar(image, ax=axes, shrink=0.5, label="attention probability")
  if title:
    figure.suptitle(title)
  return figure


def heatmap(per_head, layer_names, title=None):
  """A Figure of `per_head` [layers, heads] (Jensen-Shannon divergence):
  one cell per head, its value written in it (exactly 0 written `0`)."""
  layers, heads = per_head.shape
  figure = _figure(1.8 + 0.62 * heads, 1.2 + 0.42 * layers)
  ax = figure.subplots()
  top = float(per_head.max()) or 1.0
  image = ax.imshow(per_head, cmap="Reds", vmin=0.0, vmax=top, aspect="auto")
  for (i, head), value in np.ndenumerate(per_head):
    ax.text(
      head,
      i,
      "0" if value == 0 else "%.2g" % value,
      ha="center",
      va="center",
      fontsize=7,
      color="white" if value > 0.6 * top else "black",
    )
  ax.set_xticks(range(heads), [str(h) for h in range(heads)])
  ax.set_yticks(range(layers), list(layer_names))
  ax.set_xlabel("head")
  ax.set_ylabel("layer")
  figure.colorbar(image, ax=ax, label="Jensen-Shannon divergence (bits)")
  if title:
    ax.set_title(title, fontsize=10)
  return figure
