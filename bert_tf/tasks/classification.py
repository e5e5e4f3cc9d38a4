"""`ClassifierModel`: the original `run_classifier.create_model` as one model.

BertEncoder -> pooled output -> ClassifierHead (dropout 0.1 + `output_weights`
/ `output_bias`). Classification: softmax probabilities and the original
per-example loss `-sum(one_hot * log_softmax)`. Regression (`num_labels=1`,
e.g. STS-B): the single logit is the score, the loss is the squared error.
The batch loss is the mean of the per-example losses, as the original.

Example:
    model = ClassifierModel(config, num_labels=2)
    outputs = model(features, training=False)  # a classifier feature dict
    outputs["probabilities"]     # [B, 2]  (regression: "predictions" [B])
    outputs["per_example_loss"]  # [B], when features has "label_ids"
    init_from_checkpoint("bert_model.ckpt", model.tf1_variables())

For the `Trainer`: `Trainer(classifier_model_fn(config, 2), ...)`.
"""

import keras
import tensorflow as tf

from bert_tf.checkpoints import checkpoint_io
from bert_tf.modeling.bert_encoder import BertEncoder
from bert_tf.modeling.heads.classifier_head import ClassifierHead

_ENCODER_INPUTS = ("input_ids", "input_mask", "segment_ids")


class ClassifierModel(keras.Model):
  """Sequence(-pair) classifier or regressor over a classifier feature dict."""

  def __init__(self, config, num_labels, name="classifier_model", **kwargs):
    super().__init__(name=name, **kwargs)
    self.num_labels = num_labels
    self.encoder = BertEncoder(config)
    self.head = ClassifierHead(config, num_labels)
    self.built = True

  @property
  def is_regression(self):
    return self.num_labels == 1

  def call(self, features, training=False):
    encoder_inputs = {k: features[k] for k in _ENCODER_INPUTS if k in features}
    pooled = self.encoder(encoder_inputs, training=training)["pooled_output"]
    logits = self.head(pooled, training=training)
    outputs = {"logits": logits}
    if self.is_regression:
      outputs["predictions"] = logits[:, 0]
    else:
      outputs["probabilities"] = tf.nn.softmax(logits, axis=-1)
    if "label_ids" in features:
      outputs["per_example_loss"] = self._per_example_loss(
          logits, features["label_ids"])
    return outputs

  def _per_example_loss(self, logits, label_ids):
    if self.is_regression:
      return tf.square(logits[:, 0] - tf.cast(label_ids, logits.dtype))
    return tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=tf.cast(label_ids, tf.int32), logits=logits)

  def tf1_variables(self):
    """Original names: `bert/...`, `output_weights`, `output_bias`."""
    return checkpoint_io.tf1_name_map(self.encoder, classifier=self.head)


def batch_loss(features, outputs):
  """The original training loss: mean per-example loss of the batch."""
  del features  # The labels are already in per_example_loss.
  return tf.reduce_mean(outputs["per_example_loss"])


def classifier_model_fn(config, num_labels):
  """`model_fn` for `Trainer`: returns `(ClassifierModel, batch_loss)`."""
  def model_fn():
    return ClassifierModel(config, num_labels), batch_loss
  return model_fn
