"""Each head's change: Jensen-Shannon divergence against values derived by
hand, exactly 0 for identical rows, and its CSV and summary line."""

import io
import math

import numpy as np

from bert_tf.attention import divergence
from bert_tf.attention import maps as maps_lib


def _maps(rows_per_input, source):
  """Two tokens, one layer (5), two heads: `rows_per_input` is a list of
  [heads, 2, 2] row sets."""
  return maps_lib.AttentionMaps(
    [5],
    [
      maps_lib.Example(
        "line %d" % n, ["a", "b"], [0, 0], np.array([rows], np.float32)
      )
      for n, rows in enumerate(rows_per_input)
    ],
    source,
  )


# H(p) in bits; JSD(p, q) = H((p + q) / 2) - (H(p) + H(q)) / 2.
_H_3_1 = -(0.75 * math.log2(0.75) + 0.25 * math.log2(0.25))
_JSD_HALF_VS_ONE = _H_3_1 - 0.5  # [.5, .5] vs [1, 0]

_BEFORE = [
  [[[0.5, 0.5], [0.2, 0.8]], [[1.0, 0.0], [0.5, 0.5]]],
  [[[0.5, 0.5], [0.5, 0.5]], [[1.0, 0.0], [1.0, 0.0]]],
]
_AFTER = [
  # head 0 unchanged; head 1: row 0 disjoint (1 bit), row 1 [.5 .5] -> [1 0].
  [[[0.5, 0.5], [0.2, 0.8]], [[0.0, 1.0], [1.0, 0.0]]],
  # head 1: both rows unchanged on this input.
  [[[0.5, 0.5], [0.5, 0.5]], [[1.0, 0.0], [1.0, 0.0]]],
]


def test_divergence_per_head_matches_the_hand_derived_values():
  before, after = _maps(_BEFORE, "a"), _maps(_AFTER, "b")
  per_input = divergence.head_divergence(before, after)
  assert per_input.shape == (2, 1, 2)
  np.testing.assert_allclose(
    per_input[0, 0], [0.0, (1.0 + _JSD_HALF_VS_ONE) / 2], rtol=1e-12
  )
  # Unchanged heads are exactly 0, not merely small.
  assert per_input[0, 0, 0] == 0.0 and per_input[1, 0, 0] == 0.0
  assert (per_input[1] == 0.0).all()


def test_csv_has_a_row_per_head_with_mean_and_max():
  before = _maps(_BEFORE, "a")
  per_input = divergence.head_divergence(before, _maps(_AFTER, "b"))
  f = io.StringIO()
  divergence.write_csv(f, before, per_input)
  changed = (1.0 + _JSD_HALF_VS_ONE) / 2
  assert f.getvalue().splitlines() == [
    "layer,head,js_divergence_mean,js_divergence_max",
    "5,0,0,0",
    "5,1,%.6g,%.6g" % (changed / 2, changed),
  ]
  assert divergence.summary(before, per_input) == (
    "unchanged layers: none; most changed: layer 5 head 1 (%.3g)"
    % (changed / 2)
  )
  same = divergence.head_divergence(before, before)
  assert divergence.summary(before, same) == (
    "unchanged layers: 5; most changed: none"
  )
