"""Every registered head: it builds, its TF1 names carry its marker (and only
its marker), the original's heads use the original's names and shapes
(ckpt_a's variables.tsv, written by the original code), and
`from_variables` on its own names and shapes rebuilds a head that computes
the same outputs with the same weights.

A new head registered with `register_head` fails `test_every_head_is_covered`
until it gets a line in `_HEADS`.
"""

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.modeling.bert_encoder import BertEncoder
from bert_tf.modeling.heads import heads_for_variables
from bert_tf.modeling.heads import registered_heads
from tests.helpers.checkpoints import config_of
from tests.helpers.checkpoints import variables_tsv

CONFIG = config_of("ckpt_a")  # H=64, vocabulary 3000
_B, _S, _P = 2, 7, 3


def _sequence(rng):
  return tf.constant(rng.normal(size=(_B, _S, CONFIG.hidden_size)), tf.float32)


def _pooled(rng):
  return tf.constant(rng.normal(size=(_B, CONFIG.hidden_size)), tf.float32)


# key -> (build(config, encoder), inputs(rng) -> positional call arguments).
_HEADS = {
  "classifier": (
    lambda c, e: registered_heads()["classifier"](c, 3),
    lambda rng: [_pooled(rng)],
  ),
  "masked_lm": (
    lambda c, e: registered_heads()["masked_lm"](c, e.embedding_table),
    lambda rng: [
      _sequence(rng),
      tf.constant(rng.randint(0, _S, (_B, _P)), tf.int32),
    ],
  ),
  "multiple_choice": (
    lambda c, e: registered_heads()["multiple_choice"](c),
    lambda rng: [_pooled(rng)],
  ),
  "next_sentence": (
    lambda c, e: registered_heads()["next_sentence"](c),
    lambda rng: [_pooled(rng)],
  ),
  "squad": (
    lambda c, e: registered_heads()["squad"](c),
    lambda rng: [_sequence(rng)],
  ),
  "token_classifier": (
    lambda c, e: registered_heads()["token_classifier"](c, 5),
    lambda rng: [_sequence(rng)],
  ),
}
# The heads of the original code, all held by ckpt_a.
_ORIGINAL = ("classifier", "masked_lm", "next_sentence", "squad")


@pytest.fixture(scope="module")
def encoder():
  return BertEncoder(CONFIG)


def _shapes(head):
  return {name: list(v.shape) for name, v in head.tf1_variables().items()}


def test_every_head_is_covered():
  assert sorted(registered_heads()) == sorted(_HEADS)


@pytest.mark.parametrize("key", sorted(_HEADS))
def test_names_carry_the_marker_of_this_head_only(key, encoder):
  cls = registered_heads()[key]
  shapes = _shapes(_HEADS[key][0](CONFIG, encoder))
  assert cls.TF1_MARKER in shapes
  others = {
    k
    for k, c in registered_heads().items()
    if k != key and c.TF1_MARKER in shapes
  }
  assert not others, others
  # A checkpoint holding the encoder and this head holds this head only.
  both = dict(
    shapes, **{n: list(v.shape) for n, v in encoder.tf1_variables().items()}
  )
  assert sorted(heads_for_variables(CONFIG, both, encoder)) == [key]


@pytest.mark.parametrize("key", _ORIGINAL)
def test_original_heads_have_the_original_names_and_shapes(key, encoder):
  original = variables_tsv("ckpt_a")
  shapes = _shapes(_HEADS[key][0](CONFIG, encoder))
  assert {n: original.get(n) for n in shapes} == shapes


@pytest.mark.parametrize("key", sorted(_HEADS))
def test_round_trip_through_from_variables(key, encoder):
  build, inputs = _HEADS[key]
  head = build(CONFIG, encoder)
  rng = np.random.RandomState(0)
  for variable in head.tf1_variables().values():
    if variable is not encoder.embedding_table:
      variable.assign(rng.normal(size=variable.shape).astype(np.float32))
  rebuilt = registered_heads()[key].from_variables(
    CONFIG, _shapes(head), encoder
  )
  assert _shapes(rebuilt) == _shapes(head)
  for name, variable in rebuilt.tf1_variables().items():
    variable.assign(head.tf1_variables()[name])
  args = inputs(np.random.RandomState(1))
  want, got = head(*args), rebuilt(*args)
  for w, g in zip(tf.nest.flatten(want), tf.nest.flatten(got)):
    assert np.all(np.isfinite(w.numpy()))
    np.testing.assert_array_equal(g.numpy(), w.numpy())
