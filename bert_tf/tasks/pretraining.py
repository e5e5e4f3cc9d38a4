"""`PretrainingModel`: the original `run_pretraining.model_fn` as one model.

BertEncoder -> MaskedLMHead (`cls/predictions/*`, decoder tied to the word
embeddings) on `masked_lm_positions`, and NextSentenceHead
(`cls/seq_relationship/*`) on the pooled output. The losses are the
original's: masked LM `sum(w * l) / (sum(w) + 1e-5)` over the batch (padding
predictions have weight 0), NSP the batch-mean cross-entropy, total their
unweighted sum.

Example:
    model = PretrainingModel(config)
    outputs = model(features, training=False)  # a pre-training feature dict
    outputs["masked_lm_log_probs"]         # [B, P, V]
    outputs["next_sentence_log_probs"]     # [B, 2]; class 0 = IsNext
    loss = pretraining_loss(features, outputs)
    init_from_checkpoint("bert_model.ckpt", model.tf1_variables())

For the `Trainer`: `Trainer(PretrainingTask(config, 128, 20), ...)`.
"""

import tensorflow as tf

from bert_tf.modeling.heads.masked_lm_head import MaskedLMHead
from bert_tf.modeling.heads.next_sentence_head import NextSentenceHead
from bert_tf.records import task_schemas
from bert_tf.tasks.base import Task
from bert_tf.tasks.base import TaskModel

# The original's guard against a batch without any real prediction.
_MLM_DENOMINATOR_EPSILON = 1e-5


def _label_loss(log_probs, labels):
  """-log p(label), i.e. the original `-sum(one_hot(label) * log_probs)`."""
  labels = tf.cast(labels, tf.int32)
  picked = tf.gather(log_probs, labels[..., None], batch_dims=labels.shape.rank)
  return -tf.squeeze(picked, -1)


def feature_spec(seq_length, max_predictions_per_seq):
  """`run_pretraining.input_fn_builder`'s spec."""
  return task_schemas.pretraining_schema(
    seq_length, max_predictions_per_seq
  ).parse_spec()


class PretrainingModel(TaskModel):
  """Encoder + masked-LM and next-sentence heads over the feature dict."""

  def __init__(self, config, name="pretraining_model", **kwargs):
    super().__init__(config, name=name, **kwargs)
    self.masked_lm = MaskedLMHead(config, self.encoder.embedding_table)
    self.next_sentence = NextSentenceHead(config)

  def heads(self):
    """`cls/predictions/*` and `cls/seq_relationship/*`."""
    return {"masked_lm": self.masked_lm, "next_sentence": self.next_sentence}

  def call(self, features, training=False):
    encoded = self.encode(features, training)
    outputs = {
      "masked_lm_log_probs": self.masked_lm(
        encoded["sequence_output"], features["masked_lm_positions"]
      ),
      "next_sentence_log_probs": self.next_sentence(encoded["pooled_output"]),
    }
    if "masked_lm_ids" in features:
      outputs["masked_lm_example_loss"] = _label_loss(
        outputs["masked_lm_log_probs"], features["masked_lm_ids"]
      )
    if "next_sentence_labels" in features:
      outputs["next_sentence_example_loss"] = _label_loss(
        outputs["next_sentence_log_probs"],
        tf.reshape(features["next_sentence_labels"], [-1]),
      )
    return outputs


def masked_lm_loss(features, outputs):
  """`sum(w * l) / (sum(w) + 1e-5)` over every prediction of the batch."""
  weights = tf.cast(features["masked_lm_weights"], tf.float32)
  numerator = tf.reduce_sum(weights * outputs["masked_lm_example_loss"])
  return numerator / (tf.reduce_sum(weights) + _MLM_DENOMINATOR_EPSILON)


def pretraining_loss(features, outputs):
  """The original total loss: masked LM loss + mean NSP loss."""
  return masked_lm_loss(features, outputs) + tf.reduce_mean(
    outputs["next_sentence_example_loss"]
  )


def pretraining_metrics(features, outputs):
  """The original eval metrics as per-row `(numerator, denominator)` pairs.

  Masked-LM accuracy and loss are weighted by `masked_lm_weights`; the NSP
  ones are plain means. `loss` gives each row 1/B of its batch's loss, so the
  `Trainer`'s sum/sum is the Estimator's mean of the batch losses.
  """
  weights = tf.cast(features["masked_lm_weights"], tf.float32)
  mlm_correct = tf.cast(
    tf.equal(
      tf.argmax(outputs["masked_lm_log_probs"], -1, tf.int32),
      tf.cast(features["masked_lm_ids"], tf.int32),
    ),
    tf.float32,
  )
  nsp_labels = tf.cast(
    tf.reshape(features["next_sentence_labels"], [-1]), tf.int32
  )
  nsp_correct = tf.cast(
    tf.equal(
      tf.argmax(outputs["next_sentence_log_probs"], -1, tf.int32), nsp_labels
    ),
    tf.float32,
  )
  ones = tf.ones_like(nsp_correct)
  batch_share = ones / tf.cast(tf.size(ones), tf.float32)
  mlm_weight = tf.reduce_sum(weights, -1)
  return {
    "masked_lm_accuracy": (
      tf.reduce_sum(weights * mlm_correct, -1),
      mlm_weight,
    ),
    "masked_lm_loss": (
      tf.reduce_sum(weights * outputs["masked_lm_example_loss"], -1),
      mlm_weight,
    ),
    "next_sentence_accuracy": (nsp_correct, ones),
    "next_sentence_loss": (outputs["next_sentence_example_loss"], ones),
    "loss": (pretraining_loss(features, outputs) * batch_share, batch_share),
  }


class PretrainingTask(Task):
  """Masked LM + next sentence prediction (run_pretraining.py)."""

  name = "pretraining"

  def __init__(self, config, max_seq_length, max_predictions_per_seq):
    self.config = config
    self.max_seq_length = max_seq_length
    self.max_predictions_per_seq = max_predictions_per_seq

  def build_model(self):
    return PretrainingModel(self.config)

  def loss(self, features, outputs):
    return pretraining_loss(features, outputs)

  def metrics(self, features, outputs):
    return pretraining_metrics(features, outputs)

  def feature_spec(self, is_training):
    del is_training  # The same records train and evaluate.
    return feature_spec(self.max_seq_length, self.max_predictions_per_seq)
