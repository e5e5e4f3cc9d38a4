"""Small factories shared by the BERT layers, so every layer builds its
Dense/LayerNorm pieces and names their TF1 variables the same way.

Example:
    proj = dense(config, config.hidden_size, "dense", policy)
    proj.build((None, config.hidden_size))
    names = dense_variables("bert/pooler/dense", proj)
    # {"bert/pooler/dense/kernel": <kernel>, "bert/pooler/dense/bias": <bias>}
"""

import keras
import tensorflow as tf

from bert_tf.modeling.bert_config import LAYER_NORM_EPSILON
from bert_tf.modeling.layer_norm import LayerNorm


def create_initializer(initializer_range):
  """Truncated normal at 2 stddev, like tf.truncated_normal_initializer."""
  return keras.initializers.TruncatedNormal(stddev=initializer_range)


def dense(config, units, name, policy, activation=None):
  """A Dense layer with the original's kernel init and zero bias."""
  return keras.layers.Dense(
    units,
    activation=activation,
    kernel_initializer=create_initializer(config.initializer_range),
    name=name,
    dtype=policy,
  )


def keep_mask(shape, rate, seed):
  """bool mask, True with probability 1 - rate (rounded to 2**-16).

  Each element compares a uniform 16-bit integer with rate * 2**16, two per
  32-bit Philox draw (a bitcast, no copy): half the random-number work of
  the float32 uniform Keras draws, which was ~5% of a bfloat16 BERT-Base
  step. `seed`: a stateless seed, shape [2]. The mask does not depend on
  the compute dtype (a bfloat16 uniform would have only 128 values).
  """
  shape = tf.convert_to_tensor(shape, tf.int32)
  last = shape[-1]
  bits = tf.random.stateless_uniform(
    tf.concat([shape[:-1], [(last + 1) // 2]], 0),
    seed,
    minval=None,
    maxval=None,
    dtype=tf.uint32,
  )
  halves = tf.bitcast(bits, tf.uint16)  # [..., ceil(last / 2), 2]
  halves = tf.reshape(halves, tf.concat([shape[:-1], [-1]], 0))[..., :last]
  return halves >= int(round(rate * 65536))


def _fmix32(h):
  """MurmurHash3's 32-bit finalizer: every input bit flips each output bit
  with probability ~1/2."""
  for shift, multiplier in ((16, 0x85EBCA6B), (13, 0xC2B2AE35), (16, None)):
    h = tf.bitwise.bitwise_xor(h, tf.bitwise.right_shift(h, shift))
    if multiplier:
      h = h * multiplier
  return h


def hashed_keep_mask(shape, rate, seed):
  """bool mask, True with probability 1 - rate (rounded to 2**-32), from a
  hash of each element's index and `seed` (int32 [2]).

  For XLA kernels, which generate it where it is used (twice: the backward
  recomputes it) and store nothing: TensorFlow's Philox draws of the
  [B, A, S, S] attention masks were 5% of a bfloat16 BERT-Base step at
  seq 384, and a draw can not be fused. Two keyed rounds of MurmurHash3's
  finalizer over the index (the key itself hashed from both seed words,
  since the seed generator advances only the second by 1 per draw).
  """
  words = tf.bitcast(tf.cast(seed, tf.int32), tf.uint32)
  k0 = _fmix32(tf.bitwise.bitwise_xor(_fmix32(words[0] + 0x9E3779B9), words[1]))
  k1 = _fmix32(k0 + 0x7F4A7C15)
  index = tf.range(tf.reduce_prod(shape), dtype=tf.int32)
  h = tf.bitcast(index, tf.uint32) * 0x9E3779B9
  h = _fmix32(
    tf.bitwise.bitwise_xor(_fmix32(tf.bitwise.bitwise_xor(h, k0)), k1)
  )
  keep = h >= tf.constant(min(int(round(rate * 2**32)), 2**32 - 1), tf.uint32)
  return tf.reshape(keep, shape)


class Dropout(keras.layers.Dropout):
  """keras Dropout with `keep_mask`'s mask (the same elements dropped in
  float32 and bfloat16 for the same seed)."""

  def next_seed(self):
    """The next int32 [2] seed (advances the layer's generator)."""
    # The generator's int64 state as an int32 seed, as Keras' own draws
    # fold it (XLA takes int32 seeds only).
    return tf.cast(
      tf.math.floormod(self.seed_generator.next(), tf.int32.max - 1), tf.int32
    )

  def keep(self, shape):
    """The next bool keep mask of `shape` (advances the layer's seed)."""
    return keep_mask(shape, self.rate, self.next_seed())

  def call(self, inputs, training=False):
    if not training or not self.rate:
      return inputs
    return apply_keep(inputs, self.keep(tf.shape(inputs)), self.rate)


def apply_keep(x, keep, rate):
  """Dropout with mask `keep`: kept values scaled by 1/(1 - rate), the
  others 0."""
  kept = x * keras.ops.cast(1.0 / (1.0 - rate), x.dtype)
  return keras.ops.where(keep, kept, keras.ops.zeros_like(x))


@tf.custom_gradient
def _matmul_dx_first(x, kernel):
  def grad(dy):
    dx = tf.matmul(dy, kernel, transpose_b=True)
    with tf.control_dependencies([dx]):
      return dx, tf.matmul(x, dy, transpose_a=True)

  return tf.matmul(x, kernel), grad


def matmul_dx_first(x, kernel):
  """x @ kernel (2D), whose backward computes dx before dkernel.

  The same two matmuls as TensorFlow's gradient (same values, bit for
  bit), one after the other: TensorFlow's leaves them independent, so the
  executor runs them side by side and they share the cores. Measured on 2
  cores, a [1024, 3072] FFN's pair ran at 166-169 GFLOP/s side by side
  against 179-188 in turn (float32). The BERT-Base training step (the
  block's three explicit matmuls): float32 +2.6% at 128x8 (6 paired
  rounds), +0.9% at 384x8 (5); mixed_bfloat16 +2.1% at 128x8 (6, noisier).
  The q/k/v projections gained nothing (1.00x): they keep Keras' Dense.
  """
  return _matmul_dx_first(x, tf.convert_to_tensor(kernel))


def dropout(rate, policy):
  return Dropout(rate, dtype=policy)


def layer_norm(name, policy):
  """LayerNorm over the last axis; Keras computes it in float32 even when
  the policy is float16/bfloat16 (predicting, see `layer_norm.LayerNorm`)."""
  return LayerNorm(epsilon=LAYER_NORM_EPSILON, name=name, dtype=policy)


def dense_variables(prefix, layer):
  return {prefix + "/kernel": layer.kernel, prefix + "/bias": layer.bias}


def layer_norm_variables(prefix, layer):
  return {prefix + "/beta": layer.beta, prefix + "/gamma": layer.gamma}


def additive_attention_mask(input_mask, dtype):
  """[B, S] 1/0 key mask -> [B, 1, 1, S] adder: 0 for real keys, -10000 for
  padded keys (the original's value; -inf would change fully masked rows)."""
  mask = keras.ops.cast(input_mask, dtype)
  return (1.0 - mask[:, None, None, :]) * -10000.0
