"""`NextSentenceHead`: the original `get_next_sentence_output` (NSP).

Example:
    nsp = NextSentenceHead(config)
    log_probs = nsp(outputs["pooled_output"])  # [B, 2]; 0 = IsNext

Variables: `cls/seq_relationship/output_weights` [2, H], `output_bias` [2].
"""

import keras

from bert_tf.modeling.heads import register_head
from bert_tf.modeling.heads.output_projection import OutputProjection


@register_head("next_sentence")
class NextSentenceHead(keras.layers.Layer):
  """log_softmax(pooled . W^T + b) over the two NSP classes."""

  TF1_MARKER = "cls/seq_relationship/output_weights"

  def __init__(self, config, **kwargs):
    kwargs.setdefault("name", "seq_relationship")
    super().__init__(**kwargs)
    self.projection = OutputProjection(
      2,
      config.hidden_size,
      config.initializer_range,
      name="projection",
      dtype=self.dtype_policy,
    )
    self.built = True

  def call(self, pooled_output):
    return keras.ops.log_softmax(self.projection(pooled_output), axis=-1)

  @classmethod
  def from_variables(cls, config, shapes, encoder):
    del shapes, encoder  # unused
    return cls(config)

  def tf1_variables(self):
    return self.projection.tf1_variables("cls/seq_relationship")
