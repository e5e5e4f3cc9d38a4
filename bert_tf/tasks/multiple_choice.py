"""`MultipleChoiceModel`: BERT for SWAG-style multiple choice.

Features hold every choice of an example, [B, C, S] (C choices of S word
pieces). The encoder runs on the [B * C, S] choice inputs, a
`MultipleChoiceHead` scores each pooled output, and the scores, reshaped to
[B, C], are the logits of a softmax over the choices; the loss is the
cross-entropy of the right choice, averaged over the batch.

Example:
    model = MultipleChoiceModel(config)
    outputs = model(features, training=False)
    outputs["probabilities"]     # [B, C]
    outputs["per_example_loss"]  # [B], when features has "label_ids"

For the `Trainer`: `Trainer(MultipleChoiceTask(config, 4, 128), ...)`.
"""

import tensorflow as tf

from bert_tf.modeling.heads.multiple_choice_head import MultipleChoiceHead
from bert_tf.records.task_schemas import multiple_choice_schema
from bert_tf.tasks.base import ENCODER_INPUTS
from bert_tf.tasks.base import Task
from bert_tf.tasks.base import TaskModel
from bert_tf.tasks.classification import batch_loss


class MultipleChoiceModel(TaskModel):
  """Per-choice scores and a softmax over the choices."""

  def __init__(self, config, name="multiple_choice_model", **kwargs):
    super().__init__(config, name=name, **kwargs)
    self.head = MultipleChoiceHead(config)

  def heads(self):
    """`cls/multiple_choice/output_weights` and `output_bias`."""
    return {"multiple_choice": self.head}

  def call(self, features, training=False):
    # Static in records, dynamic in a serving signature.
    num_choices = tf.shape(features["input_ids"])[1]
    choices = {
      k: tf.reshape(v, [-1, v.shape[-1]])
      for k, v in features.items()
      if k in ENCODER_INPUTS
    }
    # Only the first token's output is read: predicting skips the padding.
    pooled = self.encode(choices, training, skip_padding=not training)[
      "pooled_output"
    ]
    logits = tf.reshape(self.head(pooled, training=training), [-1, num_choices])
    outputs = {
      "logits": logits,
      "probabilities": tf.nn.softmax(logits, axis=-1),
    }
    if "label_ids" in features:
      outputs["per_example_loss"] = (
        tf.nn.sparse_softmax_cross_entropy_with_logits(
          labels=tf.cast(features["label_ids"], tf.int32), logits=logits
        )
      )
    return outputs


class MultipleChoiceTask(Task):
  """Choose one of C endings (run_multiple_choice.py)."""

  name = "multiple_choice"
  predict_keys = ("label_ids", "is_real_example")

  def __init__(self, config, num_choices, max_seq_length):
    self.config = config
    self.num_choices = num_choices
    self.max_seq_length = max_seq_length

  def build_model(self):
    return MultipleChoiceModel(self.config)

  def loss(self, features, outputs):
    return batch_loss(features, outputs)

  def feature_spec(self, is_training):
    del is_training  # Every split has labels (zeros on the test set).
    return multiple_choice_schema(
      self.num_choices, self.max_seq_length
    ).parse_spec()
