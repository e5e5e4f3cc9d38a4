"""`OutputProjection`: logits = x . W^T + b, W in the original `[out, in]`
layout.

The original heads store `output_weights` as `[num_outputs, H]` (the transpose
of a Keras Dense kernel), so this layer keeps that layout and the TF1 names.

Example:
    proj = OutputProjection(2, 768, stddev=0.02)
    logits = proj(pooled_output)  # [B, 2], float32
    proj.tf1_variables("cls/seq_relationship")
"""

import keras

from bert_tf.modeling import layer_utils


class OutputProjection(keras.layers.Layer):
  """`output_weights` [units, in] and `output_bias` [units]; float32 logits."""

  def __init__(self, units, input_size, stddev, **kwargs):
    super().__init__(**kwargs)
    self.output_weights = self.add_weight(
      shape=(units, input_size),
      initializer=layer_utils.create_initializer(stddev),
      name="output_weights",
    )
    self.output_bias = self.add_weight(
      shape=(units,), initializer="zeros", name="output_bias"
    )
    self.built = True

  def call(self, x):
    logits = keras.ops.matmul(x, keras.ops.transpose(self.output_weights))
    # Losses and softmax want float32 even under a mixed policy.
    return keras.ops.cast(logits + self.output_bias, "float32")

  def tf1_variables(self, prefix=""):
    scope = prefix + "/" if prefix else ""
    return {
      scope + "output_weights": self.output_weights,
      scope + "output_bias": self.output_bias,
    }
