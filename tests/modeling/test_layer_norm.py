"""LayerNorm predicting (one oneDNN kernel) against Keras' ops."""

import numpy as np
import pytest
import tensorflow as tf
from tensorflow.python.util import _pywrap_util_port  # pylint: disable=g-direct-tensorflow-import

from bert_tf.modeling import layer_norm
from bert_tf.modeling import layer_utils
from bert_tf.modeling import small_inputs
from bert_tf.training import distribution


def _by_hand(x, gamma, beta, epsilon=1e-12):
  x = np.asarray(x, np.float64)
  mean = x.mean(-1, keepdims=True)
  variance = ((x - mean) ** 2).mean(-1, keepdims=True)
  return (x - mean) / np.sqrt(variance + epsilon) * gamma + beta


@pytest.mark.parametrize("shape", [[40, 48], [3, 7, 48]])
def test_predicting_equals_training_and_numpy_in_float32(shape):
  norm = layer_utils.layer_norm("LayerNorm", "float32")
  norm.build((None, 48))
  norm.gamma.assign(tf.random.normal([48], seed=1) * 0.2 + 1.0)
  norm.beta.assign(tf.random.normal([48], seed=2) * 0.2)
  x = tf.random.normal(shape, seed=3) * 3.0 + 1.0
  predicting = tf.function(lambda x: norm(x, training=False))(x)
  training = norm(x, training=True)
  want = _by_hand(x.numpy(), norm.gamma.numpy(), norm.beta.numpy())
  np.testing.assert_allclose(predicting.numpy(), want, atol=2e-6)
  np.testing.assert_allclose(training.numpy(), want, atol=2e-6)


def _bfloat16_case(small):
  """(LayerNorm predicting on bfloat16 [30, 64], float64 math of it)."""
  with distribution.policy_scope("mixed_bfloat16"):
    norm = layer_utils.layer_norm("LayerNorm", "mixed_bfloat16")
    norm.build((None, 64))
  norm.gamma.assign(tf.random.normal([64], seed=1) * 0.2 + 1.0)
  norm.beta.assign(tf.random.normal([64], seed=2) * 0.2)
  x = tf.cast(tf.random.normal([30, 64], seed=3) * 3.0, tf.bfloat16)
  predict = tf.function(lambda x: norm(x, training=False))
  if small:
    with small_inputs.scope():
      y = predict(x)
  else:
    y = predict(x)
  assert y.dtype == tf.bfloat16
  want = _by_hand(
    tf.cast(x, tf.float32).numpy(), norm.gamma.numpy(), norm.beta.numpy()
  )
  return tf.cast(y, tf.float32).numpy(), want


def test_bfloat16_is_within_two_steps_of_float32_math():
  got, want = _bfloat16_case(small=False)
  # gamma and beta rounded to bfloat16, then the output: 2 * 2**-8.
  np.testing.assert_allclose(got, want, rtol=2**-7, atol=2**-7)


def test_bfloat16_on_few_tokens_rounds_once():
  got, want = _bfloat16_case(small=True)  # `small_inputs`: element-wise
  # Float32 math, one rounding to bfloat16: half a step, 2**-9 relative.
  np.testing.assert_allclose(got, want, rtol=2**-8, atol=1e-6)


@pytest.mark.skipif(
  not _pywrap_util_port.IsMklEnabled(), reason="TensorFlow without oneDNN"
)
def test_grappler_fuses_the_static_shape_form_into_one_kernel():
  """The point of the form: after grappler, the graph holds one
  _MklLayerNorm and no batch norm or element-wise LayerNorm ops, with every
  shape static (where a plain Fill would be folded away)."""
  graph = tf.Graph()
  with graph.as_default():
    x = tf.random.normal([24, 32])
    gamma, beta = tf.random.normal([32]), tf.random.normal([32])
    y = layer_norm.fusable_layer_norm(x, gamma, beta, 1e-12)
    with tf.compat.v1.Session(graph=graph) as session:
      metadata = tf.compat.v1.RunMetadata()
      session.run(
        y,
        options=tf.compat.v1.RunOptions(output_partition_graphs=True),
        run_metadata=metadata,
      )
  ops = {
    node.op
    for partition in metadata.partition_graphs
    for node in partition.node
  }
  assert "_MklLayerNorm" in ops, ops
  assert not ops & {
    "FusedBatchNormV3",
    "_MklNativeFusedBatchNormV3",
    "Mean",
    "Rsqrt",
  }, ops
