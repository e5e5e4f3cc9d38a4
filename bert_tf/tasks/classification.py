"""`ClassifierModel`: the original `run_classifier.create_model` as one model.

BertEncoder -> pooled output -> ClassifierHead (dropout 0.1 + `output_weights`
/ `output_bias`). Classification: softmax probabilities and the original
per-example loss `-sum(one_hot * log_softmax)`. Regression (`num_labels=1`,
e.g. STS-B): the single logit is the score, the loss is the squared error.
Multi-label (`multi_label=True`, new): the same head's logits through a
sigmoid, one independent yes/no per label; `label_ids` is a 0/1 vector and
the per-example loss the mean binary cross-entropy over the labels.
The batch loss is the mean of the per-example losses, as the original.

Example:
    model = ClassifierModel(config, num_labels=2)
    outputs = model(features, training=False)  # a classifier feature dict
    outputs["probabilities"]     # [B, 2]  (regression: "predictions" [B])
    outputs["per_example_loss"]  # [B], when features has "label_ids"
    init_from_checkpoint("bert_model.ckpt", model.tf1_variables())

For the `Trainer`: `Trainer(ClassificationTask(config, 2, 128), ...)`.
"""

import tensorflow as tf

from bert_tf.modeling.heads.classifier_head import ClassifierHead
from bert_tf.records import task_schemas
from bert_tf.tasks.base import Task
from bert_tf.tasks.base import TaskModel


def feature_spec(seq_length, is_regression=False, num_labels=None):
  """`run_classifier.file_based_input_fn_builder`'s spec (`num_labels` for
  multi-label records)."""
  return task_schemas.classifier_schema(
    seq_length, is_regression, num_labels
  ).parse_spec()


class ClassifierModel(TaskModel):
  """Sequence(-pair) classifier or regressor over a classifier feature dict."""

  def __init__(
    self,
    config,
    num_labels,
    multi_label=False,
    name="classifier_model",
    **kwargs,
  ):
    super().__init__(config, name=name, **kwargs)
    self.num_labels = num_labels
    self.multi_label = multi_label
    self.head = ClassifierHead(config, num_labels)

  def heads(self):
    """Root-scope `output_weights` / `output_bias`."""
    return {"classifier": self.head}

  @property
  def is_regression(self):
    return self.num_labels == 1

  def call(self, features, training=False):
    # Only the first token's output is read: predicting skips the padding.
    pooled = self.encode(features, training, skip_padding=not training)[
      "pooled_output"
    ]
    logits = self.head(pooled, training=training)
    outputs = {"logits": logits}
    if self.is_regression:
      outputs["predictions"] = logits[:, 0]
    elif self.multi_label:
      outputs["probabilities"] = tf.sigmoid(logits)
    else:
      outputs["probabilities"] = tf.nn.softmax(logits, axis=-1)
    if "label_ids" in features:
      outputs["per_example_loss"] = self._per_example_loss(
        logits, features["label_ids"]
      )
    return outputs

  def _per_example_loss(self, logits, label_ids):
    if self.is_regression:
      return tf.square(logits[:, 0] - tf.cast(label_ids, logits.dtype))
    if self.multi_label:
      return tf.reduce_mean(
        tf.nn.sigmoid_cross_entropy_with_logits(
          labels=tf.cast(label_ids, logits.dtype), logits=logits
        ),
        axis=-1,
      )
    return tf.nn.sparse_softmax_cross_entropy_with_logits(
      labels=tf.cast(label_ids, tf.int32), logits=logits
    )


def batch_loss(features, outputs):
  """The original training loss: mean per-example loss of the batch."""
  del features  # The labels are already in per_example_loss.
  return tf.reduce_mean(outputs["per_example_loss"])


class ClassificationTask(Task):
  """Sentence(-pair) classification or regression (run_classifier.py)."""

  name = "classification"
  predict_keys = ("label_ids", "is_real_example")

  def __init__(self, config, num_labels, max_seq_length, multi_label=False):
    self.config = config
    self.num_labels = num_labels
    self.max_seq_length = max_seq_length
    self.multi_label = multi_label

  def build_model(self):
    return ClassifierModel(self.config, self.num_labels, self.multi_label)

  def loss(self, features, outputs):
    return batch_loss(features, outputs)

  def feature_spec(self, is_training):
    del is_training  # Every split has labels (zeros on the test set).
    return feature_spec(
      self.max_seq_length,
      self.num_labels == 1,
      self.num_labels if self.multi_label else None,
    )
