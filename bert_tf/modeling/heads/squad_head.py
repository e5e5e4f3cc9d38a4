"""`SquadHead`: the span head of the original `run_squad.create_model`.

Example:
    head = SquadHead(config)
    start_logits, end_logits = head(outputs["sequence_output"])  # [B, S] each

Variables: `cls/squad/output_weights` [2, H] (row 0 = start, 1 = end, stddev
0.02 hard-coded as in the original) and `cls/squad/output_bias` [2]. No
dropout, no masking of the logits (as the original).
"""

import keras

from bert_tf.modeling.heads import register_head
from bert_tf.modeling.heads.output_projection import OutputProjection

_STDDEV = 0.02


@register_head("squad")
class SquadHead(keras.layers.Layer):
  """Per-token start/end logits from the sequence output (float32)."""

  TF1_MARKER = "cls/squad/output_weights"

  def __init__(self, config, **kwargs):
    kwargs.setdefault("name", "squad")
    super().__init__(**kwargs)
    self.projection = OutputProjection(
      2, config.hidden_size, _STDDEV, name="projection", dtype=self.dtype_policy
    )
    self.built = True

  def call(self, sequence_output):
    logits = self.projection(sequence_output)
    return logits[..., 0], logits[..., 1]

  @classmethod
  def from_variables(cls, config, shapes, encoder):
    del shapes, encoder  # unused
    return cls(config)

  def tf1_variables(self):
    return self.projection.tf1_variables("cls/squad")
