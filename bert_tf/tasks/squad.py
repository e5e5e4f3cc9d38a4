"""`SquadModel`: the original `run_squad.create_model` as one model.

BertEncoder -> sequence output -> SquadHead (`cls/squad/output_weights` [2, H]
and `output_bias` [2]) -> start and end logits [B, S]. As in the original,
nothing is masked: query, [CLS] and padding positions all get logits. The
training loss is the original's `(start_loss + end_loss) / 2`, each the
batch mean of `-sum(one_hot(position, S) * log_softmax(logits))`.

Example:
    model = SquadModel(config)
    outputs = model(features, training=False)  # a SQuAD feature dict
    outputs["start_logits"], outputs["end_logits"]  # [B, S] each
    loss = span_loss(features, outputs)  # features with start/end_positions
    init_from_checkpoint("bert_model.ckpt", model.tf1_variables())

For the `Trainer`: `Trainer(SquadTask(config, 384), ...)`; `Trainer.predict`
with `feature_keys=task.predict_keys` yields the original's predict outputs
(`unique_ids`, `start_logits`, `end_logits`).
"""

import tensorflow as tf

from bert_tf.modeling.heads.squad_head import SquadHead
from bert_tf.records import task_schemas
from bert_tf.tasks.base import Task
from bert_tf.tasks.base import TaskModel


def feature_spec(seq_length, is_training):
  """`run_squad.input_fn_builder`'s spec (`is_impossible` is never parsed)."""
  return task_schemas.squad_schema(seq_length, is_training).parse_spec(
    omit=("is_impossible",)
  )


class SquadModel(TaskModel):
  """Span start/end logits over a SQuAD feature dict."""

  def __init__(self, config, name="squad_model", **kwargs):
    super().__init__(config, name=name, **kwargs)
    self.head = SquadHead(config)

  def heads(self):
    """`cls/squad/output_weights` / `output_bias`."""
    return {"squad": self.head}

  def call(self, features, training=False):
    sequence = self.encode(features, training)["sequence_output"]
    start_logits, end_logits = self.head(sequence)
    return {
      "start_logits": tf.cast(start_logits, tf.float32),
      "end_logits": tf.cast(end_logits, tf.float32),
    }


def _position_loss(logits, positions):
  """Batch mean of -log_softmax(logits)[position] (the original one-hot sum)."""
  log_probs = tf.nn.log_softmax(logits, axis=-1)
  one_hot = tf.one_hot(
    tf.cast(positions, tf.int32), tf.shape(logits)[-1], dtype=log_probs.dtype
  )
  return -tf.reduce_mean(tf.reduce_sum(one_hot * log_probs, axis=-1))


def span_loss(features, outputs):
  """The original training loss: mean of the start and end losses."""
  start = _position_loss(outputs["start_logits"], features["start_positions"])
  end = _position_loss(outputs["end_logits"], features["end_positions"])
  return (start + end) / 2.0


class SquadTask(Task):
  """SQuAD v1.1/v2.0 span prediction (the original run_squad.py)."""

  name = "squad"
  predict_keys = ("unique_ids",)

  def __init__(self, config, max_seq_length):
    self.config = config
    self.max_seq_length = max_seq_length

  def build_model(self):
    return SquadModel(self.config)

  def loss(self, features, outputs):
    return span_loss(features, outputs)

  def feature_spec(self, is_training):
    return feature_spec(self.max_seq_length, is_training)
