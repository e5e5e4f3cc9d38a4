"""`MultipleChoiceHead`: one score per choice from its pooled output.

The BERT paper's SWAG head (Devlin's recipe in google-research/bert#38): run
the encoder on every (example, choice) input, score each pooled [CLS] vector
with one learned vector, softmax over an example's choices.

Example:
    head = MultipleChoiceHead(config)
    scores = head(outputs["pooled_output"], training=True)  # [B * C]
    logits = tf.reshape(scores, [-1, num_choices])           # [B, C]

Dropout 0.1 in training and `output_weights` initialised with stddev 0.02,
as the original classifier head. Variables: `cls/multiple_choice/
output_weights` [1, H] and `cls/multiple_choice/output_bias` [1].
"""

import keras

from bert_tf.modeling import layer_utils
from bert_tf.modeling.heads import register_head
from bert_tf.modeling.heads.output_projection import OutputProjection

_DROPOUT = 0.1
_STDDEV = 0.02


@register_head("multiple_choice")
class MultipleChoiceHead(keras.layers.Layer):
  """dropout(pooled) . w + b -> float32 scores [N], one per pooled row."""

  TF1_MARKER = "cls/multiple_choice/output_weights"

  def __init__(self, config, **kwargs):
    kwargs.setdefault("name", "multiple_choice")
    super().__init__(**kwargs)
    self.dropout = layer_utils.dropout(_DROPOUT, self.dtype_policy)
    self.projection = OutputProjection(
      1, config.hidden_size, _STDDEV, name="projection", dtype=self.dtype_policy
    )
    self.built = True

  def call(self, pooled_output, training=False):
    return self.projection(self.dropout(pooled_output, training=training))[:, 0]

  @classmethod
  def from_variables(cls, config, shapes, encoder):
    del shapes, encoder  # unused
    return cls(config)

  def tf1_variables(self):
    return self.projection.tf1_variables("cls/multiple_choice")
