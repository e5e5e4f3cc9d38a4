"""`LayerNorm`: Keras' LayerNormalization, one oneDNN kernel when predicting.

Keras 3 computes a LayerNorm as ~10 element-wise TensorFlow ops (plus two
casts in bfloat16), each a pass over the activations. TensorFlow's oneDNN
build fuses one graph pattern into its `_MklLayerNorm` kernel (grappler's
remapper): the form Keras 2 used,

    Reshape x to [1, N, H, 1] -> FusedBatchNormV3(is_training, scale=Fill(1),
    offset=Fill(0), empty mean/variance, NCHW) -> Reshape -> * gamma -> beta +

On [3072, 768] (seq 384 x batch 8) that kernel took 1.3 ms against 6.7 ms
for Keras' ops in bfloat16, and 2.8 against 6.5 ms in float32 (2 cores). It
computes the statistics in float32; in bfloat16 it takes gamma and beta
rounded to bfloat16 (outputs within two bfloat16 steps of float32 math
instead of one). Grappler folds a `Fill` of a static shape into a constant,
which the pattern does not match: the row count goes through
PlaceholderWithDefault, which it never folds.

Training keeps Keras' ops (the kernel has no gradient), and so do builds
without oneDNN and machines with a GPU (cuDNN's batch norm raises epsilon
to 1e-5; BERT's is 1e-12). Predicting few tokens in bfloat16
(`small_inputs`), `float32_layer_norm`'s ten ops beat the kernel's fixed
cost per call.

Example:
    norm = LayerNorm(epsilon=1e-12, name="LayerNorm")
    y = norm(x)  # x: [..., H]; predicting: one _MklLayerNorm on CPU
"""

import functools

import keras
import tensorflow as tf
from tensorflow.python.util import _pywrap_util_port  # pylint: disable=g-direct-tensorflow-import

from bert_tf.modeling import small_inputs


@functools.cache
def _fusable():
  return (
    _pywrap_util_port.IsMklEnabled()
    and not tf.config.list_physical_devices("GPU")
  )


def fusable_layer_norm(x, gamma, beta, epsilon):
  """LayerNorm over the last axis of x (rank 2 or 3), in the graph form
  TensorFlow's oneDNN build runs as one kernel (see the module doc)."""
  shape = tf.shape(x)
  rows = tf.compat.v1.placeholder_with_default(
    tf.reduce_prod(shape[:-1], keepdims=True), [1]
  )
  normalized = tf.raw_ops.FusedBatchNormV3(
    x=tf.reshape(x, tf.concat([[1], rows, shape[-1:], [1]], 0)),
    scale=tf.fill(rows, 1.0),
    offset=tf.fill(rows, 0.0),
    mean=tf.constant([], tf.float32),
    variance=tf.constant([], tf.float32),
    epsilon=epsilon,
    data_format="NCHW",
    is_training=True,
  ).y
  return tf.cast(beta, x.dtype) + tf.reshape(normalized, shape) * tf.cast(
    gamma, x.dtype
  )


def float32_layer_norm(x, gamma, beta, epsilon):
  """LayerNorm over the last axis in float32 math, rounded once to x's
  dtype: 10 element-wise ops, none of them a oneDNN call."""
  x32 = tf.cast(x, tf.float32)
  mean, variance = tf.nn.moments(x32, [-1], keepdims=True)
  scale = tf.math.rsqrt(variance + epsilon) * tf.cast(gamma, tf.float32)
  return tf.cast((x32 - mean) * scale + tf.cast(beta, tf.float32), x.dtype)


class LayerNorm(keras.layers.LayerNormalization):
  """LayerNormalization over the last axis; predicting on a CPU with oneDNN,
  as one fused kernel."""

  def call(self, inputs, training=False):
    # The kernel's ranks and types; float16 keeps Keras' float32 math.
    if (
      training
      or not _fusable()
      or not 2 <= len(inputs.shape) <= 3
      or inputs.dtype not in (tf.float32, tf.bfloat16)
    ):
      return super().call(inputs)
    args = (inputs, self.gamma, self.beta, self.epsilon)
    if inputs.dtype == tf.bfloat16 and small_inputs.active():
      return float32_layer_norm(*args)
    return fusable_layer_norm(*args)
