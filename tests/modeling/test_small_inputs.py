"""`small_inputs`: bfloat16 prediction on few tokens without oneDNN's fixed
cost per call, against the kernels' forms and the original's outputs (the
LayerNorm's own form: tests/modeling/test_layer_norm.py)."""

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.modeling import bert_self_attention
from bert_tf.modeling import small_inputs
from bert_tf.tasks.base import TaskModel
from bert_tf.training import distribution
from tests.helpers.checkpoints import ENCODER_DIR
from tests.helpers.checkpoints import golden_inputs
from tests.helpers.checkpoints import load_golden


class _Encoding(TaskModel):
  def __init__(self, config):
    super().__init__(config, name="encoding")

  def heads(self):
    return {}


def _model(policy="mixed_bfloat16"):
  with distribution.policy_scope(policy):
    config, encoder, _, _ = load_golden("ckpt_a")
    model = _Encoding(config)
  model.encoder.set_weights(encoder.get_weights())
  return model


def _sequence(fn, inputs, small=False):
  traced = tf.function(fn)
  if small:
    with small_inputs.scope():
      out = traced(inputs)
  else:
    out = traced(inputs)
  return np.asarray(tf.cast(out["sequence_output"], tf.float32))


def test_encode_branches_on_the_batch_size():
  model = _model()
  encode = lambda x: model.encode(x, training=False, skip_padding=True)
  row = {k: v[:1] for k, v in golden_inputs().items()}  # 24 real tokens
  assert row["input_mask"].all()
  small = _sequence(model.encoder, row, small=True)
  kernels = _sequence(model.encoder, row)
  assert not np.array_equal(small, kernels)  # the forms round differently
  np.testing.assert_array_equal(_sequence(encode, row), small)
  # 576 tokens x H=64 is over MAX_SIZE: the kernels.
  big = {k: np.repeat(v, 24, 0) for k, v in row.items()}
  assert big["input_ids"].size * 64 > small_inputs.MAX_SIZE
  np.testing.assert_array_equal(
    _sequence(encode, big), _sequence(model.encoder, big)
  )
  # Within bfloat16 rounding of the original's float32 outputs, as the
  # kernels' form (tests/modeling/test_encoder.py).
  want = np.load(ENCODER_DIR / "expected_a.npz")["sequence_output"][:1]
  atol = 0.02 * np.max(np.abs(want))
  np.testing.assert_allclose(small, want, rtol=0, atol=atol)


def test_float32_keeps_its_bits():
  model = _model("float32")
  row = {k: v[:1] for k, v in golden_inputs().items()}
  encode = lambda x: model.encode(x, training=False, skip_padding=True)
  np.testing.assert_array_equal(
    _sequence(encode, row), _sequence(model.encoder, row)
  )


@pytest.mark.parametrize("dtype", [tf.bfloat16, tf.float16, tf.float32])
def test_heads_transpose_keeps_the_bits(dtype):
  x = tf.cast(tf.random.normal([2, 5, 3, 4], seed=4), dtype)
  bits = tf.int16 if dtype.size == 2 else tf.int32  # float32: plain
  want = np.transpose(tf.bitcast(x, bits).numpy(), (0, 2, 1, 3))
  with small_inputs.scope():
    got = tf.function(bert_self_attention._heads_transpose)(x)  # pylint: disable=protected-access
  assert got.dtype == dtype
  np.testing.assert_array_equal(tf.bitcast(got, bits).numpy(), want)
