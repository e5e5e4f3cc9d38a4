"""The fused training kernels against TensorFlow's own ops and autodiff."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf.modeling import layer_utils
from bert_tf.modeling import xla_fused
from bert_tf.modeling.activations import get_activation
from bert_tf.modeling.bert_config import BertConfig
from bert_tf.modeling.bert_self_attention import BertSelfAttention
from bert_tf.modeling.transformer_block import TransformerBlock
from bert_tf.training import distribution


def _normal(shape, seed):
  # Stateless: the same values whatever ran before in the process.
  return tf.random.stateless_normal(shape, [seed, 0])


def _value_and_grads(fn, args, dy):
  with tf.GradientTape() as tape:
    tape.watch(args)
    y = fn(*args)
  return [y] + tape.gradient(y, args, output_gradients=dy)


@pytest.mark.parametrize("name", ["gelu", "gelu_exact", "relu", "linear"])
def test_bias_activation_in_float32_equals_autodiff(name):
  fn = get_activation(name)
  x = _normal([64, 96], 1) * 3
  bias = _normal([96], 3)
  dy = _normal([64, 96], 2)
  plain = lambda x, b: x + b if fn is None else fn(x + b)  # noqa: E731
  want = _value_and_grads(plain, [x, bias], dy)
  got = _value_and_grads(
    lambda x, b: xla_fused.bias_activation(x, b, fn), [x, bias], dy
  )
  # XLA's CPU tanh is within ~3e-6 of TF's; 1 + tanh cancels near -1.
  for w, g in zip(want, got):
    np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-5, atol=1e-5)


def test_bfloat16_bias_activation_is_float32_math_rounded_once():
  """bfloat16 in and out, float32 inside: the float32 GELU and its
  gradient rounded to bfloat16 (one rounding, so within one bfloat16 step
  of 2**-8 relative)."""
  x = tf.cast(_normal([64, 96], 1) * 3, tf.bfloat16)
  bias = tf.cast(_normal([96], 3), tf.bfloat16)
  dy = tf.cast(_normal([64, 96], 2), tf.bfloat16)
  gelu = get_activation("gelu")
  got = _value_and_grads(
    lambda x, b: xla_fused.bias_activation(x, b, gelu), [x, bias], dy
  )
  assert [t.dtype for t in got] == [tf.bfloat16] * 3
  wide = [tf.cast(t, tf.float32) for t in (x, bias, dy)]
  want = _value_and_grads(lambda x, b: gelu(x + b), wide[:2], wide[2])
  # The bias gradient sums 64 rounded terms in float32, then rounds.
  for g, w in zip(got, want):
    np.testing.assert_allclose(
      tf.cast(g, tf.float32).numpy(), w.numpy(), rtol=2**-8, atol=1e-5
    )


@pytest.mark.parametrize("rate", [0.0, 0.25])
def test_bias_dropout_add_norm_equals_plain_ops_and_their_gradients(rate):
  """LayerNorm(where(keep, (x + b) / (1 - rate), 0) + residual) by
  TensorFlow's ops and autodiff, float32."""
  x, residual, dy = (_normal([32, 48], s) for s in (3, 4, 7))
  bias, gamma, beta = (_normal([48], s) for s in (5, 6, 8))
  seed = tf.constant([9, 1]) if rate else None
  keep = layer_utils.hashed_keep_mask([32, 48], rate, seed) if rate else None

  def plain(x, b, r, g, be):
    y = x + b
    if keep is not None:
      y = tf.where(keep, y / (1 - rate), 0.0)
    return keras.ops.layer_normalization(y + r, g, be, epsilon=1e-12)

  args = [x, bias, residual, gamma, beta]
  want = _value_and_grads(plain, args, dy)
  got = _value_and_grads(
    lambda x, b, r, g, be: xla_fused.bias_dropout_add_norm(
      x, b, seed, r, g, be, epsilon=1e-12, rate=rate
    ),
    args,
    dy,
  )
  for w, g in zip(want, got):
    np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-5, atol=2e-5)
  if keep is not None:  # a dropped input gets no gradient
    assert (
      float(tf.reduce_max(tf.abs(tf.boolean_mask(got[1 + 0], ~keep)))) == 0.0
    )


@pytest.mark.parametrize(
  "dtype,scale,tol",
  [
    (tf.float32, 0.125, 1e-5),
    (tf.float32, 1.0, 1e-5),
    (tf.bfloat16, 0.125, 2**-8),
    (tf.bfloat16, 1.0, 2**-7),
  ],
)
def test_softmax_dropout_is_float32_softmax_and_dropout(dtype, scale, tol):
  """where(keep, softmax(scores * scale + adder) / 0.9, 0) and its score
  gradient by TensorFlow's ops and autodiff in float32, from the same
  (rounded) inputs. bfloat16 out: one rounding when the scale moves the
  softmax to float32; with scale 1 two (oneDNN rounds the probabilities,
  the dropout's scaling rounds again) and the gradient reads the rounded
  probabilities."""
  shape = [2, 4, 16, 16]
  scores = _normal(shape, 1) / scale
  adder = tf.constant([0.0] * 12 + [-10000.0] * 4)[None, None, None, :]
  dy = _normal(shape, 2)
  seed = tf.constant([3, 5])
  keep = layer_utils.hashed_keep_mask(shape, 0.1, seed)
  low = [tf.cast(t, dtype) for t in (scores, adder, dy)]
  plain = lambda s: tf.where(  # noqa: E731
    keep, tf.nn.softmax(s * scale + adder) / 0.9, 0.0
  )
  want = _value_and_grads(
    plain, [tf.cast(low[0], tf.float32)], tf.cast(low[2], tf.float32)
  )
  got = _value_and_grads(
    lambda s: tf.cast(
      xla_fused.dropout_of_softmax(
        BertSelfAttention._logits(s, low[1], scale, float32=False), seed, 0.1
      ),
      dtype,
    ),
    [low[0]],
    low[2],
  )
  assert [g.dtype for g in got] == [dtype] * 2
  for g, w in zip(got, want):
    np.testing.assert_allclose(
      tf.cast(g, tf.float32).numpy(),
      w.numpy(),
      rtol=tol,
      atol=tol * float(tf.reduce_max(tf.abs(w))),
    )
  assert not np.any(got[0].numpy()[~keep.numpy()])  # dropped: exactly 0


@pytest.mark.parametrize(
  "policy,tol", [("float32", 2e-5), ("mixed_bfloat16", 0.05)]
)
def test_block_trains_through_the_fused_kernels_like_it_predicts(policy, tol):
  """Without dropout, training (fused kernels) and predicting (plain ops)
  compute the same function: same outputs and weight gradients."""
  config = BertConfig.from_dict(
    dict(
      vocab_size=50,
      hidden_size=64,
      num_hidden_layers=1,
      num_attention_heads=4,
      intermediate_size=128,
      hidden_dropout_prob=0.0,
      attention_probs_dropout_prob=0.0,
    )
  )
  with distribution.policy_scope(policy):
    block = TransformerBlock(config, name="layer_0")
  x = _normal([2, 8, 64], 8)
  adder = tf.zeros([2, 1, 1, 8])
  dy = _normal([2, 8, 64], 9)

  def run(training):
    with tf.GradientTape() as tape:
      y = tf.cast(block(x, adder, training=training), tf.float32)
    return [y] + tape.gradient(
      y, block.trainable_variables, output_gradients=dy
    )

  for got, want in zip(run(True), run(False)):
    # The key bias' gradient is zero up to rounding (softmax ignores a
    # shift of all scores): a floor keeps its tolerance above rounding.
    scale = max(float(tf.reduce_max(tf.abs(want))), 1e-2)
    np.testing.assert_allclose(
      got.numpy(), want.numpy(), rtol=tol, atol=tol * scale
    )
