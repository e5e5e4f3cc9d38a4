"""`MaskedLMHead`: the original `get_masked_lm_output` (MLM predictions).

Example:
    mlm = MaskedLMHead(config, encoder.embedding_table)
    log_probs = mlm(outputs["sequence_output"], masked_lm_positions)  # [B,P,V]

The sequence output is gathered at `positions` [B, P], transformed by
Dense_H + hidden_act + LayerNorm (`cls/predictions/transform/*`), then
multiplied by the tied word embeddings transposed, plus its own
`cls/predictions/output_bias` [V]. Log-softmax runs in float32.
"""

import keras

from bert_tf.modeling import layer_utils
from bert_tf.modeling.activations import get_activation
from bert_tf.modeling.heads import register_head


@register_head("masked_lm")
class MaskedLMHead(keras.layers.Layer):
  """Masked-LM log-probabilities over the vocabulary."""

  TF1_MARKER = "cls/predictions/output_bias"

  def __init__(self, config, embedding_table, **kwargs):
    kwargs.setdefault("name", "predictions")
    super().__init__(**kwargs)
    policy = self.dtype_policy
    # The encoder's own variable (tied, not copied); Keras models count a
    # shared variable once.
    self.embedding_table = embedding_table
    self.transform = layer_utils.dense(
      config,
      config.hidden_size,
      "transform",
      policy,
      activation=get_activation(config.hidden_act),
    )
    self.layer_norm = layer_utils.layer_norm("LayerNorm", policy)
    self.transform.build((None, None, config.hidden_size))
    self.layer_norm.build((None, None, config.hidden_size))
    self.output_bias = self.add_weight(
      shape=(config.vocab_size,), initializer="zeros", name="output_bias"
    )
    self.built = True

  def call(self, sequence_output, positions):
    x = keras.ops.take_along_axis(
      sequence_output, keras.ops.cast(positions, "int32")[:, :, None], axis=1
    )
    x = self.layer_norm(self.transform(x))
    table = keras.ops.cast(self.embedding_table, x.dtype)
    logits = keras.ops.matmul(x, keras.ops.transpose(table))
    logits = keras.ops.cast(logits + self.output_bias, "float32")
    return keras.ops.log_softmax(logits, axis=-1)

  @classmethod
  def from_variables(cls, config, shapes, encoder):
    del shapes  # unused
    return cls(config, encoder.embedding_table)

  def tf1_variables(self):
    names = layer_utils.dense_variables(
      "cls/predictions/transform/dense", self.transform
    )
    names.update(
      layer_utils.layer_norm_variables(
        "cls/predictions/transform/LayerNorm", self.layer_norm
      )
    )
    names["cls/predictions/output_bias"] = self.output_bias
    return names
