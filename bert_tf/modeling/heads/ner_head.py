"""`NerHead`: per-token tag logits, as the BERT paper's NER.

Example:
    head = NerHead(config, num_labels=9)
    logits = head(outputs["sequence_output"], training=True)  # [B, S, 9]

Dropout 0.1 in training, then one projection shared by every position:
`cls/token_classifier/output_weights` [num_labels, input_size] (stddev
0.02, as the original classifier) and `cls/token_classifier/output_bias`.
`input_size` defaults to the hidden size; a feature-based tagger puts it on
top of a BiLSTM (2 * lstm_units).
"""

import keras

from bert_tf.modeling import layer_utils
from bert_tf.modeling.heads import register_head
from bert_tf.modeling.heads.output_projection import OutputProjection

_DROPOUT = 0.1
_STDDEV = 0.02
# The TF1 scope checkpoints hold (a name of the format, kept as it is).
_SCOPE = "cls/token_classifier"


@register_head("token_classifier")
class NerHead(keras.layers.Layer):
  """dropout(x) . W^T + b at every position -> float32 logits [B, S, K]."""

  TF1_MARKER = _SCOPE + "/output_weights"

  def __init__(self, config, num_labels, input_size=None, **kwargs):
    kwargs.setdefault("name", "token_classifier")
    super().__init__(**kwargs)
    self.num_labels = num_labels
    self.dropout = layer_utils.dropout(_DROPOUT, self.dtype_policy)
    self.projection = OutputProjection(
      num_labels,
      input_size or config.hidden_size,
      _STDDEV,
      name="projection",
      dtype=self.dtype_policy,
    )
    self.built = True

  def call(self, sequence_output, training=False):
    return self.projection(self.dropout(sequence_output, training=training))

  @classmethod
  def from_variables(cls, config, shapes, encoder):
    del encoder  # unused
    num_labels, input_size = shapes[cls.TF1_MARKER]
    return cls(config, num_labels, input_size)

  def tf1_variables(self):
    return self.projection.tf1_variables(_SCOPE)
