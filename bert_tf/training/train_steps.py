"""The training steps under the `Trainer`: the input positioned at the step
a run resumes from, one optimizer update per replica batch, the traced loop
of N updates and the host loop that runs it in paced calls (`progress.py`).

Batch sizes stay global and per *update*: with `accumulation` N each
per-replica batch is split into N micro-batches whose gradients are
averaged before one `optimizer.apply`, so N trades memory for time without
changing the maths (the loss-mean case is equal to the unsplit batch).

Example:
    check_batch_size(strategy, dataset_fn, accumulation=2)
    iterator, checkpoint = resumed_input(strategy, dataset_fn, step, latest,
                                         model_checkpoint_fn)
    update = UpdateStep(model, task.loss, optimizer, 2, use_xla=False)
    loop = make_train_loop(strategy, update.replica_step)
    loss, examples = run_host_loop(loop, pacer, iterator, step, step + 100,
                                   bar, input_files)
"""

import time

from absl import logging
import numpy as np
import tensorflow as tf

from bert_tf.io_utils import InputError
from bert_tf.training import batch_padding
from bert_tf.training import input_pipeline


def check_batch_size(strategy, dataset_fn, accumulation):
  """InputError unless the per-replica batch of `dataset_fn` is static and
  divisible by `accumulation`."""
  replicas = strategy.num_replicas_in_sync
  spec = dataset_fn(
    tf.distribute.InputContext(num_replicas_in_sync=replicas)
  ).element_spec
  batch = tf.nest.flatten(spec)[0].shape[0]
  if batch is None or batch % accumulation:
    raise InputError(
      "per-replica batch %s (global batch / %d replicas) must be static "
      "and divisible by --gradient_accumulation_steps=%d"
      % (batch, replicas, accumulation)
    )


def resumed_input(strategy, dataset_fn, step, restored, model_checkpoint):
  """The training iterator positioned at `step`, and the full checkpoint.

  `restored` is the checkpoint path the model was restored from (None if
  none); `model_checkpoint(**more)` gives the model's checkpoint holding
  `more` too. Iterators of the default strategy are checkpointed (exact,
  shuffle buffer included); distributed iterators are not trackable, so
  they resume by skipping the batches of the first `step` steps (exact in
  deterministic mode, where the input order is reproducible).
  """

  def untuned_fn(ctx):
    return input_pipeline.without_autotune(dataset_fn(ctx))

  iterator = iter(strategy.distribute_datasets_from_function(untuned_fn))
  # Only the default strategy's iterator is a (checkpointable) tf.data one.
  if isinstance(iterator, tf.data.Iterator):
    names = (
      [n for n, _ in tf.train.list_variables(restored)] if restored else []
    )
    if not step or any(n.startswith("data/") for n in names):
      if step:
        tf.train.Checkpoint(data=iterator).read(restored).expect_partial()
      return iterator, model_checkpoint(data=iterator)

  def skipping_fn(ctx):
    per_pipeline = ctx.num_replicas_in_sync // ctx.num_input_pipelines
    return untuned_fn(ctx).skip(step * per_pipeline)

  logging.info("Input: skipping the batches of %d steps", step)
  iterator = iter(strategy.distribute_datasets_from_function(skipping_fn))
  return iterator, model_checkpoint()


class UpdateStep:
  """One optimizer update on a replica's batch, as `accumulation`
  micro-batches; the forward/backward pass is traced (with XLA if
  `use_xla`)."""

  def __init__(self, model, loss_fn, optimizer, accumulation, use_xla):
    self.model = model
    self.loss_fn = loss_fn  # (features, outputs) -> the batch loss
    self.optimizer = optimizer
    self.accumulation = accumulation
    self.use_xla = use_xla
    self.retrace()

  def retrace(self):
    """Traces the gradients anew: the trainable variables have changed."""
    self._grad_fn = tf.function(
      self._compute_gradients, jit_compile=self.use_xla
    )

  def _compute_gradients(self, features, scale):
    variables = self.model.trainable_variables
    with tf.GradientTape() as tape:
      outputs = self.model(features, training=True)
      loss = tf.cast(self.loss_fn(features, outputs), tf.float32) * scale
      scaled_loss = self.optimizer.scale_loss(loss)
    return loss, tape.gradient(scaled_loss, variables)

  def replica_step(self, features):
    """Updates the model on this replica's batch; -> (loss, batch size)."""
    ctx = tf.distribute.get_replica_context()
    n = self.accumulation
    scale = 1.0 / (ctx.num_replicas_in_sync * n)
    batch = tf.shape(tf.nest.flatten(features)[0])[0]
    if n == 1:
      loss, grads = self._grad_fn(features, scale)
    else:
      micro = batch_padding.split_batch(features, n)
      loss, grads = self._grad_fn(batch_padding.take(micro, 0), scale)
      present = [i for i, g in enumerate(grads) if g is not None]

      def body(i, loss_sum, grad_sums):
        step_loss, step_grads = self._grad_fn(
          batch_padding.take(micro, i), scale
        )
        return (
          i + 1,
          loss_sum + step_loss,
          [s + step_grads[j] for s, j in zip(grad_sums, present)],
        )

      _, loss, sums = tf.while_loop(
        lambda i, *_: i < n,
        body,
        (tf.constant(1), loss, [grads[j] for j in present]),
      )
      grads = list(grads)
      for j, total in zip(present, sums):
        grads[j] = total
    # Variables outside the loss (the pooler under SQuAD, as in the original)
    # have no gradient: leave them out so Keras does not warn about them.
    pairs = [
      (g, v)
      for g, v in zip(grads, self.model.trainable_variables)
      if g is not None
    ]
    self.optimizer.apply([g for g, _ in pairs], [v for _, v in pairs])
    return loss, batch


def make_train_loop(strategy, replica_step):
  """A traced `train_loop(iterator, num_steps)` that runs `replica_step`
  on every replica `num_steps` times; -> (mean loss, examples)."""

  @tf.function
  def train_loop(iterator, num_steps):
    loss_sum = tf.constant(0.0)
    examples = tf.constant(0)
    for _ in tf.range(num_steps):
      loss, batch = strategy.run(replica_step, args=(next(iterator),))
      loss_sum += strategy.reduce(tf.distribute.ReduceOp.SUM, loss, None)
      examples += strategy.reduce(tf.distribute.ReduceOp.SUM, batch, None)
    return loss_sum / tf.cast(num_steps, tf.float32), examples

  return train_loop


def run_host_loop(train_loop, pacer, iterator, step, stop, bar, input_files):
  """Runs the steps step+1..stop (one host loop) in calls of `train_loop`
  sized by `pacer`, `bar` moving after each; -> (mean loss, examples).
  `input_files` are named when a record is damaged."""
  losses, examples, done = [], 0, step
  while done < stop:
    n = pacer.size(stop - done)
    start = time.time()
    try:
      loss, count = train_loop(iterator, tf.constant(n))
    except tf.errors.DataLossError as e:
      raise InputError(input_pipeline.damaged_input(input_files, e)) from e
    loss, count = float(loss), int(count)  # Waits for the steps.
    pacer.record(n, time.time() - start)
    if not np.isfinite(loss):
      # A NaN/inf loss only spreads: stop before saving it.
      raise InputError(
        "training loss is %s in steps %d..%d: check --learning_rate, "
        "the labels and the inputs (nothing of these steps was "
        "saved)" % (loss, done + 1, done + n)
      )
    losses.append((loss, n))
    examples, done = examples + count, done + n
    bar.update(n, loss=loss, examples=count)
  if len(losses) == 1:
    return losses[0][0], examples
  return sum(loss * n for loss, n in losses) / (stop - step), examples
