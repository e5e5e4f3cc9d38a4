"""The PNG figures: the grid names layers by number, keeps every layer on its
own rows and its token labels legible at a viewable width; the heat map
writes each head's value, 0 as `0`."""

import numpy as np
import pytest

from bert_tf.attention import figures
from bert_tf.io_utils import InputError
from tests.helpers.attention import softmax_rows


def _titles(figure):
  return [a.get_title() for a in figure.axes if a.get_title()]


def test_grid_of_a_long_sentence_stays_legible():
  tokens = ["[CLS]"] + ["w%d" % i for i in range(38)] + ["[SEP]"]
  attentions = softmax_rows((2, 12, 40, 40))
  figure = figures.grid(tokens, attentions, ["0", "5"])
  width, height = figure.get_size_inches() * figures.DPI
  # 12 heads of 40 tokens in rows of at most ~1,600 pixels, >= 10 px a token.
  assert width <= 1700
  panels = [a for a in figure.axes if a.get_title()]
  assert len(panels) == 24
  box = panels[0].get_window_extent(figure.canvas.get_renderer())
  assert box.height / 40 >= 10
  labels = panels[0].get_xticklabels()
  assert [t.get_text() for t in labels] == tokens
  assert min(t.get_fontsize() for t in labels) >= 7
  # Each layer starts on a row of its own: no row holds two layers.
  rows = {}
  for panel in panels:
    top = round(panel.get_position().y1, 3)
    rows.setdefault(top, set()).add(panel.get_title().split(",")[0])
  assert all(len(layers) == 1 for layers in rows.values())
  assert _titles(figure)[:2] == ["layer 0, head 0", "layer 0, head 1"]
  assert _titles(figure)[-1] == "layer 5, head 11"
  assert height > width / 4  # not one 3,728 x 668 strip


def test_grid_draws_the_chosen_heads_and_refuses_others():
  attentions = softmax_rows((1, 4, 5, 5))
  tokens = list("abcde")
  figure = figures.grid(tokens, attentions, ["last"], heads=[3, 1])
  assert _titles(figure) == ["layer last, head 3", "layer last, head 1"]
  image = [a for a in figure.axes if a.get_title()][0].get_images()[0]
  np.testing.assert_array_equal(image.get_array(), attentions[0, 3])
  with pytest.raises(InputError, match="--heads: 4 is out of range"):
    figures.grid(tokens, attentions, ["last"], heads=[4])


def test_heatmap_writes_each_heads_value():
  values = np.array([[0.0, 0.0, 0.0], [0.25, 0.0125, 0.0]])
  figure = figures.heatmap(values, ["3", "4"], title="t")
  ax = figure.axes[0]
  assert [t.get_text() for t in ax.texts] == [
    "0",
    "0",
    "0",
    "0.25",
    "0.013",
    "0",
  ]
  assert [t.get_text() for t in ax.get_yticklabels()] == ["3", "4"]
  np.testing.assert_array_equal(ax.get_images()[0].get_array(), values)
  assert figure.axes[1].get_ylabel() == "Jensen-Shannon divergence (bits)"
