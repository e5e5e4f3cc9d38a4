"""The Task contract: all the `Trainer` knows of a task.

A task builds its model, says how to score a batch (loss, optional
metrics), which TFRecord features it reads, and which input features
`Trainer.predict` passes through to post-processing. Post-processing of
predicted rows is the task's own (classifier_results for classification;
SQuAD's n-best search and the official evaluation are pure data and live in
`data_prep/squad`).

Example:
    class MyTask(Task):
      name = "my_task"
      def build_model(self):
        return MyModel(self.config)          # a built TaskModel
      def loss(self, features, outputs):
        return tf.reduce_mean(outputs["per_example_loss"])

    trainer = Trainer(MyTask(), optimizer_fn, "out")

Task models share `TaskModel`: an encoder plus heads, whose `tf1_variables()`
is the union of their original TF1 names (so checkpoint I/O is a table).
"""

import functools

import keras
import tensorflow as tf

from bert_tf.checkpoints import checkpoint_io
from bert_tf.modeling import small_inputs
from bert_tf.modeling.bert_encoder import BertEncoder

ENCODER_INPUTS = ("input_ids", "input_mask", "segment_ids")


class Task:
  """A fine-tuning or pre-training task, as the `Trainer` sees it."""

  name = "task"
  # Input features `Trainer.predict` yields next to the model outputs.
  predict_keys = ()

  def build_model(self):
    """A built Keras model: `model(features, training)` -> dict of tensors.

    Called under the strategy's scope. For `--init_checkpoint` it needs
    `tf1_variables()`.
    """
    raise NotImplementedError

  def loss(self, features, outputs):
    """Scalar loss of one batch (replicas and micro-batches are averaged)."""
    raise NotImplementedError

  def metrics(self, features, outputs):
    """`{name: (numerator[B], denominator[B])}`; `Trainer.evaluate` reports
    sum(numerator) / sum(denominator). None: the task has no in-graph
    metrics."""
    del features, outputs  # unused
    return None

  def feature_spec(self, is_training):
    """The `tf.io.parse_single_example` spec of the task's TFRecords."""
    raise NotImplementedError


class TaskModel(keras.Model):
  """`BertEncoder` + the heads a subclass adds (see `heads()`)."""

  def __init__(self, config, name, **kwargs):
    super().__init__(name=name, **kwargs)
    self.encoder = BertEncoder(config)
    self.built = True  # Every layer creates its variables when constructed.

  def heads(self):
    """{label: head}: the layers besides the encoder that own TF1 names."""
    raise NotImplementedError

  def encode(self, features, training, skip_padding=False):
    """The encoder's outputs for the encoder inputs of `features`.

    `skip_padding` (predicting): a batch with padding runs the encoder's
    dense layers on its real tokens only (`BertEncoder.call`: the same
    real-token outputs, padded positions 0); a batch without skips the
    gathers and scatters that would cost it ~4%.
    """
    inputs = {k: features[k] for k in ENCODER_INPUTS if k in features}
    if not skip_padding or "input_mask" not in inputs:
      return self.encoder(inputs, training=training)
    whole = lambda: self.encoder(inputs, training=training)
    if self.encoder.compute_dtype == "bfloat16":
      whole = functools.partial(self._small_or_not, inputs)
    return tf.cond(
      tf.reduce_all(inputs["input_mask"] > 0),
      whole,
      lambda: self.encoder(inputs, training=training, skip_padding=True),
    )

  def _small_or_not(self, inputs):
    """bfloat16: a batch of few tokens (a single request) runs kernels
    without a fixed cost per call (`small_inputs`)."""

    def small():
      with small_inputs.scope():
        return self.encoder(inputs)

    size = tf.size(inputs["input_ids"]) * self.encoder.config.hidden_size
    return tf.cond(
      size <= small_inputs.MAX_SIZE, small, lambda: self.encoder(inputs)
    )

  def tf1_variables(self):
    """Original TF1 name -> variable, encoder and heads."""
    return checkpoint_io.tf1_name_map(self.encoder, **self.heads())
