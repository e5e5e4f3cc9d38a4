"""How much each head's attention changed between two models: the
Jensen-Shannon divergence of its attention rows (base 2: 0 = the same
distribution, 1 = disjoint), averaged over each input's query tokens.

A layer whose weights, and every weight below it, were frozen during
fine-tuning computes bit-identical rows, so its divergence is exactly 0.

Example:
    per_input = head_divergence(before, after)  # [inputs, layers, heads]
    write_csv(f, before, per_input)
"""

import csv

import numpy as np
from scipy.spatial import distance


def head_divergence(before, after):
  """float64 [inputs, layers, heads]: per input, each head's mean
  Jensen-Shannon divergence over query rows (maps checked comparable)."""
  return np.stack(
    [
      (
        distance.jensenshannon(
          a.attentions.astype(np.float64),
          b.attentions.astype(np.float64),
          axis=-1,
          base=2,
        )
        ** 2
      ).mean(-1)
      for a, b in zip(before.examples, after.examples)
    ]
  )


def write_csv(f, maps, per_input):
  """One row per (layer, head): the divergence averaged over the inputs and
  its largest value on one input."""
  writer = csv.writer(f, lineterminator="\n")
  writer.writerow(["layer", "head", "js_divergence_mean", "js_divergence_max"])
  mean, most = per_input.mean(0), per_input.max(0)
  for i in range(mean.shape[0]):
    for head in range(mean.shape[1]):
      writer.writerow(
        [
          maps.layer_name(i),
          head,
          "%.6g" % mean[i, head],
          "%.6g" % most[i, head],
        ]
      )


def summary(maps, per_input):
  """One line: the layers that did not change at all and the heads that
  changed most."""
  mean = per_input.mean(0)
  unchanged = [
    maps.layer_name(i) for i in range(len(mean)) if not mean[i].any()
  ]
  order = np.argsort(mean, axis=None)[::-1][:3]
  top = [
    "layer %s head %d (%.3g)" % (maps.layer_name(i), h, mean[i, h])
    for i, h in zip(*np.unravel_index(order, mean.shape))
    if mean[i, h] > 0
  ]
  return "unchanged layers: %s; most changed: %s" % (
    ", ".join(unchanged) or "none",
    ", ".join(top) or "none",
  )
