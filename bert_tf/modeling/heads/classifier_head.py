"""`ClassifierHead`: the head of the original `run_classifier.create_model`.

Example:
    head = ClassifierHead(config, num_labels=3)
    logits = head(outputs["pooled_output"], training=True)  # [B, 3]

Dropout is 0.1 in training whatever the config says, and `output_weights`
[K, H] is initialised with stddev 0.02, both hard-coded as in the original.
Its variables sit at the root scope: `output_weights`, `output_bias`.
`num_labels=1` gives one regression output.
"""

import keras

from bert_tf.modeling import layer_utils
from bert_tf.modeling.heads import register_head
from bert_tf.modeling.heads.output_projection import OutputProjection

_DROPOUT = 0.1
_STDDEV = 0.02


@register_head("classifier")
class ClassifierHead(keras.layers.Layer):
  """dropout(pooled) . W^T + b -> float32 logits [B, num_labels]."""

  TF1_MARKER = "output_weights"

  def __init__(self, config, num_labels, **kwargs):
    kwargs.setdefault("name", "classifier")
    super().__init__(**kwargs)
    self.num_labels = num_labels
    self.dropout = layer_utils.dropout(_DROPOUT, self.dtype_policy)
    self.projection = OutputProjection(
      num_labels,
      config.hidden_size,
      _STDDEV,
      name="projection",
      dtype=self.dtype_policy,
    )
    self.built = True

  def call(self, pooled_output, training=False):
    return self.projection(self.dropout(pooled_output, training=training))

  @classmethod
  def from_variables(cls, config, shapes, encoder):
    del encoder  # unused
    return cls(config, shapes["output_weights"][0])

  def tf1_variables(self):
    return self.projection.tf1_variables("")
