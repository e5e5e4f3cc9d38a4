"""Token tagging (NER), fine-tuned or feature-based as the BERT paper.

`NerModel`: BertEncoder -> per-token features -> NerHead
(`cls/token_classifier/output_weights` [K, in], `output_bias` [K]) -> logits
[B, S, K]. The loss is the cross-entropy of the labelled positions
(`label_weights` 1 on the first piece of each word, 0 elsewhere), averaged
over them.

`feature_mode`:
* `fine_tune`: the last layer feeds the head; everything is trained.
* `embeddings`, `second_to_last`, `last`, `weighted_sum_last_four`,
  `concat_last_four`, `weighted_sum_all` (paper §5.3): the encoder is frozen
  (no gradient, no dropout), these layers are combined (weighted sums are
  learned softmax-normalised scalar mixes, ELMo style, starting equal) and a
  randomly initialised two-layer BiLSTM of `lstm_units` per direction plus
  the head are trained on top.

Example:
    model = NerModel(config, num_labels=9, feature_mode="fine_tune")
    outputs = model(features, training=False)
    outputs["logits"]       # [B, S, 9]
    outputs["predictions"]  # [B, S] argmax label ids
    outputs["loss_sum"]     # [B] weighted token loss, with label_ids

For the `Trainer`: `Trainer(NerTask(config, 9, 128), ...)`.
"""

import keras
import tensorflow as tf

from bert_tf.io_utils import InputError
from bert_tf.modeling.heads.ner_head import NerHead
from bert_tf.records.task_schemas import ner_schema
from bert_tf.tasks.base import Task
from bert_tf.tasks.base import TaskModel

# mode -> the (embeddings = 0, block i = i + 1) outputs it combines, as a
# function of the number of layers L.
_LAYERS = {
  "embeddings": lambda n: [0],
  "second_to_last": lambda n: [n - 1],
  "last": lambda n: [n],
  "weighted_sum_last_four": lambda n: list(range(n - 3, n + 1)),
  "concat_last_four": lambda n: list(range(n - 3, n + 1)),
  "weighted_sum_all": lambda n: list(range(1, n + 1)),
}
FEATURE_MODES = ("fine_tune",) + tuple(_LAYERS)
_BILSTM_LAYERS = 2


def check_feature_mode(feature_mode, num_layers):
  """InputError unless the mode exists and the model has its layers."""
  if feature_mode not in FEATURE_MODES:
    raise InputError(
      "--feature_mode=%s: expected one of %s"
      % (feature_mode, ", ".join(FEATURE_MODES))
    )
  if feature_mode != "fine_tune" and min(_LAYERS[feature_mode](num_layers)) < 0:
    raise InputError(
      "--feature_mode=%s needs more layers than the model's "
      "%d" % (feature_mode, num_layers)
    )


class ScalarMix(keras.layers.Layer):
  """gamma * sum_j softmax(w)_j h_j over a list of equal-shape tensors."""

  def __init__(self, num_inputs, **kwargs):
    super().__init__(**kwargs)
    self.mix_weights = self.add_weight(
      shape=(num_inputs,), initializer="zeros", name="weights"
    )
    self.gamma = self.add_weight(shape=(), initializer="ones", name="gamma")
    self.built = True

  def call(self, inputs):
    weights = keras.ops.softmax(self.mix_weights)
    return self.gamma * sum(weights[j] * x for j, x in enumerate(inputs))


class NerModel(TaskModel):
  """Per-token label logits over a tagging feature dict."""

  def __init__(
    self,
    config,
    num_labels,
    feature_mode="fine_tune",
    lstm_units=768,
    name="tagging_model",
    **kwargs,
  ):
    super().__init__(config, name=name, **kwargs)
    check_feature_mode(feature_mode, config.num_hidden_layers)
    self.feature_mode = feature_mode
    input_size = config.hidden_size
    if feature_mode != "fine_tune":
      self.encoder.trainable = False
      self.layer_indices = _LAYERS[feature_mode](config.num_hidden_layers)
      width = config.hidden_size
      if feature_mode == "concat_last_four":
        width *= len(self.layer_indices)
      elif feature_mode.startswith("weighted_sum"):
        self.scalar_mix = ScalarMix(len(self.layer_indices), name="scalar_mix")
      for i in range(_BILSTM_LAYERS):
        bilstm = keras.layers.Bidirectional(
          keras.layers.LSTM(lstm_units, return_sequences=True),
          name="bilstm_%d" % i,
        )
        bilstm.build((None, None, width))
        width = 2 * lstm_units
        # One attribute per layer, so object checkpoints track each.
        setattr(self, "bilstm_%d" % i, bilstm)
      input_size = width
    self.head = NerHead(config, num_labels, input_size)

  def heads(self):
    """`cls/token_classifier/output_weights` / `output_bias`."""
    return {"token_classifier": self.head}

  def combined_layers(self, features):
    """A feature mode's combination of the frozen encoder's layers."""
    outputs = self.encode(features, training=False)  # frozen: no dropout
    layers = [outputs["embedding_output"]] + outputs["encoder_outputs"]
    chosen = [layers[i] for i in self.layer_indices]
    if self.feature_mode == "concat_last_four":
      return keras.ops.concatenate(chosen, axis=-1)
    if self.feature_mode.startswith("weighted_sum"):
      return self.scalar_mix(chosen)
    return chosen[0]

  def _bilstm_features(self, features):
    x = self.combined_layers(features)
    mask = keras.ops.cast(features["input_mask"], "bool")
    for i in range(_BILSTM_LAYERS):
      x = getattr(self, "bilstm_%d" % i)(x, mask=mask)
    # A plain tensor (padding stays 0): the head takes no Keras mask.
    return keras.ops.where(mask[..., None], x, 0.0)

  def call(self, features, training=False):
    if self.feature_mode == "fine_tune":
      x = self.encode(features, training)["sequence_output"]
    else:
      x = self._bilstm_features(features)
    logits = self.head(x, training=training)
    outputs = {
      "logits": logits,
      "predictions": tf.argmax(logits, axis=-1, output_type=tf.int32),
    }
    if "label_ids" in features:
      token_loss = tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=tf.cast(features["label_ids"], tf.int32), logits=logits
      )
      weights = tf.cast(features["label_weights"], token_loss.dtype)
      outputs["loss_sum"] = tf.reduce_sum(token_loss * weights, axis=-1)
    return outputs


def tagging_loss(features, outputs):
  """Mean cross-entropy over the batch's labelled positions."""
  weights = tf.cast(features["label_weights"], tf.float32)
  return tf.math.divide_no_nan(
    tf.reduce_sum(outputs["loss_sum"]), tf.reduce_sum(weights)
  )


class NerTask(Task):
  """Per-token tagging (run_ner.py)."""

  name = "tagging"
  predict_keys = ("label_ids", "label_weights")

  def __init__(
    self,
    config,
    num_labels,
    max_seq_length,
    feature_mode="fine_tune",
    lstm_units=768,
  ):
    self.config = config
    self.num_labels = num_labels
    self.max_seq_length = max_seq_length
    self.feature_mode = feature_mode
    self.lstm_units = lstm_units

  def build_model(self):
    return NerModel(
      self.config, self.num_labels, self.feature_mode, self.lstm_units
    )

  def loss(self, features, outputs):
    return tagging_loss(features, outputs)

  def feature_spec(self, is_training):
    del is_training  # Every split has the same features.
    return ner_schema(self.max_seq_length).parse_spec()
