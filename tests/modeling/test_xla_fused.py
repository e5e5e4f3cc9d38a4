"""The fused training kernels against TensorFlow's own ops and autodiff."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf.modeling import xla_fused
from bert_tf.modeling.activations import get_activation
from bert_tf.modeling.bert_config import BertConfig
from bert_tf.modeling.transformer_block import TransformerBlock
from bert_tf.training import distribution


def _value_and_grads(fn, args, dy):
  with tf.GradientTape() as tape:
    tape.watch(args)
    y = fn(*args)
  return [y] + tape.gradient(y, args, output_gradients=dy)


@pytest.mark.parametrize("name", ["gelu", "gelu_exact", "relu"])
def test_activation_in_float32_equals_autodiff(name):
  plain = get_activation(name)
  x = tf.random.normal([64, 96], seed=1) * 3
  dy = tf.random.normal([64, 96], seed=2)
  want = _value_and_grads(plain, [x], dy)
  got = _value_and_grads(xla_fused.activation(plain), [x], dy)
  # XLA's CPU tanh is within ~3e-6 of TF's; 1 + tanh cancels near -1.
  for w, g in zip(want, got):
    np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-5, atol=1e-5)


def test_bfloat16_activation_is_float32_math_rounded_once():
  """bfloat16 in and out, float32 inside: the float32 GELU and its
  gradient rounded to bfloat16 (one rounding, so within one bfloat16 step
  of 2**-8 relative)."""
  x32 = tf.random.normal([64, 96], seed=1) * 3
  x, dy = tf.cast(x32, tf.bfloat16), tf.cast(tf.random.normal([64, 96]),
                                             tf.bfloat16)
  y, dx = _value_and_grads(xla_fused.activation(get_activation("gelu")),
                           [x], dy)
  assert y.dtype == dx.dtype == tf.bfloat16
  want_y, want_dx = _value_and_grads(
      get_activation("gelu"), [tf.cast(x, tf.float32)], tf.cast(dy, tf.float32))
  for got, want in ((y, want_y), (dx, want_dx)):
    np.testing.assert_allclose(tf.cast(got, tf.float32).numpy(), want.numpy(),
                               rtol=2**-8, atol=1e-5)


def test_add_layer_norm_equals_keras_layer_norm_and_its_gradients():
  x = tf.random.normal([32, 48], seed=3)
  residual = tf.random.normal([32, 48], seed=4)
  gamma = tf.random.normal([48], seed=5)
  beta = tf.random.normal([48], seed=6)
  dy = tf.random.normal([32, 48], seed=7)
  plain = lambda x, r, g, b: keras.ops.layer_normalization(  # noqa: E731
      x + r, g, b, epsilon=1e-12)
  want = _value_and_grads(plain, [x, residual, gamma, beta], dy)
  got = _value_and_grads(
      lambda *t: xla_fused.add_layer_norm(*t, epsilon=1e-12),
      [x, residual, gamma, beta], dy)
  for w, g in zip(want, got):
    np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-5, atol=2e-5)


@pytest.mark.parametrize("policy,tol", [("float32", 2e-5),
                                        ("mixed_bfloat16", 0.05)])
def test_block_trains_through_the_fused_kernels_like_it_predicts(policy, tol):
  """Without dropout, training (fused kernels) and predicting (plain ops)
  compute the same function: same outputs and weight gradients."""
  config = BertConfig.from_dict(dict(
      vocab_size=50, hidden_size=64, num_hidden_layers=1,
      num_attention_heads=4, intermediate_size=128,
      hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0))
  with distribution.policy_scope(policy):
    block = TransformerBlock(config, name="layer_0")
  x = tf.random.normal([2, 8, 64], seed=8)
  adder = tf.zeros([2, 1, 1, 8])
  dy = tf.random.normal([2, 8, 64], seed=9)

  def run(training):
    with tf.GradientTape() as tape:
      y = tf.cast(block(x, adder, training=training), tf.float32)
    return [y] + tape.gradient(y, block.trainable_variables,
                               output_gradients=dy)

  for got, want in zip(run(True), run(False)):
    # The key bias' gradient is zero up to rounding (softmax ignores a
    # shift of all scores): a floor keeps its tolerance above rounding.
    scale = max(float(tf.reduce_max(tf.abs(want))), 1e-2)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=tol,
                               atol=tol * scale)
