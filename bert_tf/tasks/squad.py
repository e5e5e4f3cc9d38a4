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

For the `Trainer`: `Trainer(squad_model_fn(config), ...)`; `Trainer.predict`
with `feature_keys=("unique_ids",)` yields the original's predict outputs
(`unique_ids`, `start_logits`, `end_logits`).
"""

import keras
import tensorflow as tf

from bert_tf.checkpoints import checkpoint_io
from bert_tf.modeling.bert_encoder import BertEncoder
from bert_tf.modeling.heads.squad_head import SquadHead

_ENCODER_INPUTS = ("input_ids", "input_mask", "segment_ids")


class SquadModel(keras.Model):
  """Span start/end logits over a SQuAD feature dict."""

  def __init__(self, config, name="squad_model", **kwargs):
    super().__init__(name=name, **kwargs)
    self.encoder = BertEncoder(config)
    self.head = SquadHead(config)
    self.built = True

  def call(self, features, training=False):
    encoder_inputs = {k: features[k] for k in _ENCODER_INPUTS}
    sequence = self.encoder(encoder_inputs, training=training)
    start_logits, end_logits = self.head(sequence["sequence_output"])
    return {"start_logits": tf.cast(start_logits, tf.float32),
            "end_logits": tf.cast(end_logits, tf.float32)}

  def tf1_variables(self):
    """Original names: `bert/...`, `cls/squad/output_weights` / `_bias`."""
    return checkpoint_io.tf1_name_map(self.encoder, squad=self.head)


def _position_loss(logits, positions):
  """Batch mean of -log_softmax(logits)[position] (the original one-hot sum)."""
  log_probs = tf.nn.log_softmax(logits, axis=-1)
  one_hot = tf.one_hot(tf.cast(positions, tf.int32), tf.shape(logits)[-1],
                       dtype=log_probs.dtype)
  return -tf.reduce_mean(tf.reduce_sum(one_hot * log_probs, axis=-1))


def span_loss(features, outputs):
  """The original training loss: mean of the start and end losses."""
  start = _position_loss(outputs["start_logits"], features["start_positions"])
  end = _position_loss(outputs["end_logits"], features["end_positions"])
  return (start + end) / 2.0


def squad_model_fn(config):
  """`model_fn` for `Trainer`: returns `(SquadModel, span_loss)`."""
  def model_fn():
    return SquadModel(config), span_loss
  return model_fn
