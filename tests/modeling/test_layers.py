"""Dropout's keep masks (16-bit Philox, hashed) and the two attention paths."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf.modeling import layer_utils
from bert_tf.modeling.bert_config import BertConfig
from bert_tf.modeling.bert_self_attention import BertSelfAttention
from bert_tf.training import distribution


def _config(**overrides):
  return BertConfig.from_dict(
    dict(
      dict(
        vocab_size=50,
        hidden_size=64,
        num_hidden_layers=1,
        num_attention_heads=4,
        intermediate_size=128,
      ),
      **overrides,
    )
  )


def test_keep_mask_is_16_bit_halves_of_the_philox_draw():
  """Element 2i is the low and 2i+1 the high half of the i-th 32-bit draw
  of the row (little-endian), kept iff >= round(0.1 * 2**16) = 6554; an odd
  row drops the unused last half."""
  seed = tf.constant([4, 9], tf.int32)
  for width in (300, 7):
    mask = layer_utils.keep_mask([8, width], 0.1, seed).numpy()
    bits = (
      tf.random.stateless_uniform(
        [8, (width + 1) // 2], seed, minval=None, maxval=None, dtype=tf.uint32
      )
      .numpy()
      .astype(np.int64)
    )
    halves = np.stack([bits & 0xFFFF, bits >> 16], -1).reshape(8, -1)
    np.testing.assert_array_equal(mask, halves[:, :width] >= 6554)


def test_hashed_keep_mask_keeps_1_minus_rate_independently():
  """Over 2**22 elements: the kept share is 1 - rate within 4 sd; masks of
  successive seeds (the generator moves the second word by 1) agree on
  0.9**2 + 0.1**2 of the elements, as independent masks do; neighbours
  and rows 384 apart are uncorrelated; XLA computes the same bits."""
  shape = [32, 384, 384 - 43]  # odd sizes: no period hides in a row
  n = np.prod(shape)
  masks = [
    layer_utils.hashed_keep_mask(shape, 0.1, tf.constant([7, s]))
    .numpy()
    .reshape(-1)
    for s in (1, 2)
  ]
  sd = np.sqrt(0.09 / n)
  for m in masks:
    assert abs(m.mean() - 0.9) < 4 * sd, m.mean()
  assert abs((masks[0] == masks[1]).mean() - 0.82) < 4 * np.sqrt(
    0.82 * 0.18 / n
  )
  a = masks[0].astype(np.float64)
  for lag in (1, 384):
    assert abs(np.corrcoef(a[:-lag], a[lag:])[0, 1]) < 4 / np.sqrt(n)
  compiled = tf.function(layer_utils.hashed_keep_mask, jit_compile=True)
  np.testing.assert_array_equal(
    compiled([8, 300], 0.25, tf.constant([7, 1])).numpy(),
    layer_utils.hashed_keep_mask([8, 300], 0.25, tf.constant([7, 1])),
  )


def test_dropout_drops_the_same_elements_in_float32_and_bfloat16():
  x = tf.random.normal([8, 300], seed=3)
  a = layer_utils.Dropout(0.1, seed=7, dtype="float32")(x, training=True)
  b = layer_utils.Dropout(0.1, seed=7, dtype="mixed_bfloat16")(
    tf.cast(x, tf.bfloat16), training=True
  )
  assert b.dtype == tf.bfloat16
  a = a.numpy()
  kept = a != 0
  np.testing.assert_array_equal(kept, b.numpy() != 0)
  np.testing.assert_allclose(a[kept], x.numpy()[kept] / 0.9, rtol=1e-6)
  layer = layer_utils.Dropout(0.1, seed=7, dtype="float32")
  np.testing.assert_array_equal(layer(x, training=False).numpy(), x.numpy())


def test_dropout_rate_holds_in_bfloat16():
  """A bfloat16 uniform has 128 values: Keras' mask would keep 115/128 =
  89.84%; ours keeps 90% within sampling noise (sd 0.016% here)."""
  x = tf.ones([1000, 4000], tf.bfloat16)
  with distribution.policy_scope("mixed_bfloat16"):
    layer = layer_utils.dropout(0.1, keras.mixed_precision.dtype_policy())
    y = layer(x, training=True)
    keras_y = keras.layers.Dropout(0.1)(x, training=True)
  assert y.dtype == tf.bfloat16
  kept = float(tf.reduce_mean(tf.cast(y != 0, tf.float32)))
  assert abs(kept - 0.9) < 1e-3, kept
  keras_kept = float(tf.reduce_mean(tf.cast(keras_y != 0, tf.float32)))
  assert abs(keras_kept - 115 / 128) < 1e-3, keras_kept


@pytest.mark.parametrize("policy", ["float32", "mixed_bfloat16"])
@pytest.mark.parametrize("hidden", [64, 48])  # scale 1/4 (q scaled), 1/sqrt(12)
def test_fused_attention_equals_explicit(policy, hidden):
  """Predicting without probabilities, the layer scales the scores instead
  of q (in a graph, fused into the batched matmul with the mask) and its
  bfloat16 softmax takes bfloat16 scores; its context equals
  the explicit path's (float32 softmax) exactly, padded keys included, and
  the probabilities are the float32 softmax of the scaled scores computed
  here by hand."""
  with distribution.policy_scope(policy):
    attention = BertSelfAttention(_config(hidden_size=hidden), dtype=policy)
  x = tf.random.normal([3 * 24, hidden], seed=5)
  mask = np.ones([3, 24], np.int32)
  mask[1, 20:] = 0
  mask[2, 5:] = 0
  adder = layer_utils.additive_attention_mask(mask, "float32")
  fused = attention(x, adder, batch=3, seq=24)
  explicit, probs = attention(x, adder, batch=3, seq=24, return_probs=True)
  np.testing.assert_array_equal(
    tf.cast(fused, tf.float32).numpy(), tf.cast(explicit, tf.float32).numpy()
  )
  # In a graph, grappler's fused kernels (float32: BatchMatMul * scale +
  # adder in one) give the same context.
  graph_fused = tf.function(lambda x: attention(x, adder, batch=3, seq=24))
  np.testing.assert_array_equal(
    tf.cast(graph_fused(x), tf.float32).numpy(),
    tf.cast(explicit, tf.float32).numpy(),
  )
  assert probs.dtype == tf.float32
  np.testing.assert_allclose(probs.numpy()[2, :, :, 5:], 0.0, atol=1e-30)
  heads = lambda t: (
    np.asarray(tf.cast(t, tf.float32))
    .reshape(3, 24, 4, hidden // 4)
    .transpose(0, 2, 1, 3)
  )
  compute = attention.query.compute_dtype
  q, k = (
    heads(layer(tf.cast(x, compute)))
    for layer in (attention.query, attention.key)
  )
  scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(hidden // 4)
  scores = scores + (1.0 - mask[:, None, None, :]) * -10000.0
  want = np.exp(scores - scores.max(-1, keepdims=True))
  want /= want.sum(-1, keepdims=True)
  tolerance = 1e-5 if policy == "float32" else 2e-2
  np.testing.assert_allclose(probs.numpy(), want, atol=tolerance)
  # Training with attention dropout takes the explicit path (dropout on
  # the probabilities), without it the fused one: same context again.
  no_dropout = BertSelfAttention(
    _config(hidden_size=hidden, attention_probs_dropout_prob=0.0), dtype=policy
  )
  no_dropout.set_weights(attention.get_weights())
  np.testing.assert_array_equal(
    tf.cast(
      no_dropout(x, adder, batch=3, seq=24, training=True), tf.float32
    ).numpy(),
    tf.cast(explicit, tf.float32).numpy(),
  )


def test_matmul_dx_first_is_tensorflows_gradient_in_turn():
  """Same product and gradients as TensorFlow's MatMul, bit for bit; in
  the gradient graph the kernel's matmul waits for x's."""
  rng = np.random.default_rng(0)
  x = tf.constant(rng.normal(size=(6, 5)), tf.float32)
  kernel = tf.Variable(rng.normal(size=(5, 3)), dtype=tf.float32)
  dy = tf.constant(rng.normal(size=(6, 3)), tf.float32)

  def gradients(matmul):
    with tf.GradientTape() as tape:
      tape.watch(x)
      y = matmul(x, kernel)
    return [y] + tape.gradient(y, [x, kernel], output_gradients=dy)

  for ours, theirs in zip(
    gradients(layer_utils.matmul_dx_first), gradients(tf.matmul)
  ):
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())

  graph = (
    tf.function(lambda: gradients(layer_utils.matmul_dx_first))
    .get_concrete_function()
    .graph
  )
  matmuls = [op for op in graph.get_operations() if op.type == "MatMul"]
  by_flags = {
    (op.get_attr("transpose_a"), op.get_attr("transpose_b")): op
    for op in matmuls
  }
  assert len(matmuls) == 3
  dx, dkernel = by_flags[(False, True)], by_flags[(True, False)]
  assert dx in dkernel.control_inputs
