"""`Trainer`: the Estimator replacement (train / evaluate / predict).

A custom training loop under a `tf.distribute` strategy: host loops of
`iterations_per_loop` steps (on one host other than a TPU, run as calls of
about two seconds so that progress shows live: `progress.py`), optional XLA for the
forward/backward pass, dynamic loss scaling under `mixed_float16`, gradient
accumulation, checkpoints and TensorBoard summaries in `output_dir`, and
resume from the latest checkpoint (model, optimizer slots, dropout RNG
state, step and input position: the iterator is checkpointed on the default
strategy; distributed iterators resume by skipping the batches already
consumed, exact in deterministic mode).
The global step is `optimizer.iterations` (one per update).

Batch sizes stay global and per *update*: with `gradient_accumulation_steps`
N each per-replica batch is split into N micro-batches whose gradients are
averaged before one `optimizer.apply`, so N trades memory for time without
changing the maths (the loss-mean case is equal to the unsplit batch).

The trainer knows only a `bert_tf.tasks.base.Task`: `task.build_model()`
(called under `strategy.scope()`) gives a built model that maps the whole
feature dict of a batch to a dict of tensors; `task.loss(features, outputs)`
is the batch loss (replicas and micro-batches are averaged);
`task.metrics(features, outputs)` gives `{name: (numerator[B],
denominator[B])}` and `evaluate` reports sum(numerator) / sum(denominator)
over real rows. `optimizer_fn()` returns a Keras optimizer (e.g.
`create_optimizer(...)`). `train(..., eval_hook=...)` runs a script's full
dev evaluation every N steps (`bert_tf/training/eval_hook.py`: history,
TensorBoard, best model, early stopping). What a checkpoint holds and how a
damaged one is skipped: `checkpointing.py`; batched inference on any
strategy: `inference.py`.

Example:
    trainer = Trainer(SquadTask(config, 384),
                      lambda: create_optimizer(5e-5, 1000, 100),
                      "out", strategy, init_checkpoint_fn=load_tf1)
    trainer.train(training_dataset_fn(files, specs, 32), num_steps=1000)
    for row in trainer.predict(eval_dataset(files, specs, 8), 8,
                               feature_keys=("unique_ids",)):
      ...
"""

import os
import shutil
import time

from absl import logging
import keras
import numpy as np
import tensorflow as tf
from tensorflow.core.framework import summary_pb2

from bert_tf.io_utils import InputError
from bert_tf.training import batch_padding
from bert_tf.training import checkpointing
from bert_tf.training import distribution
from bert_tf.training import inference
from bert_tf.training import input_pipeline
from bert_tf.training import run_files
from bert_tf.training.progress import HostLoopPacer
from bert_tf.training.progress import Progress

# TensorBoard's scalar plugin tag, written with the core op so that the
# `tensorboard` package is not needed at training time.
_SCALAR_METADATA = summary_pb2.SummaryMetadata(
    plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="scalars"))


def write_scalars(scalars, step):
  """Writes {tag: number} as TensorBoard scalars to the default writer."""
  for name, value in scalars.items():
    tf.summary.write(name, tf.constant(value, tf.float32), step=step,
                     metadata=_SCALAR_METADATA)


class Trainer:
  """Trains, evaluates and predicts a Keras model under a strategy."""

  def __init__(self, task, optimizer_fn, output_dir, strategy=None,
               iterations_per_loop=1000, save_checkpoints_steps=1000,
               keep_checkpoint_max=5, gradient_accumulation_steps=1,
               use_xla=False, init_checkpoint_fn=None, progress=True,
               unfreeze_schedule=None):
    if gradient_accumulation_steps < 1:
      raise InputError("--gradient_accumulation_steps must be >= 1, got %d" %
                       gradient_accumulation_steps)
    if iterations_per_loop < 1:
      raise InputError("--iterations_per_loop must be >= 1, got %d" %
                       iterations_per_loop)
    self.strategy = strategy or tf.distribute.get_strategy()
    self.output_dir = os.fspath(output_dir)
    self.iterations_per_loop = iterations_per_loop
    self.save_checkpoints_steps = save_checkpoints_steps
    self.keep_checkpoint_max = keep_checkpoint_max
    self.accumulation = gradient_accumulation_steps
    self.use_xla = use_xla
    self.init_checkpoint_fn = init_checkpoint_fn
    self.progress = progress
    self.task = task
    # training.unfreezing.UnfreezeSchedule: frozen layers by global step.
    self.unfreeze = unfreeze_schedule
    with self.strategy.scope():
      self.model = task.build_model()
      optimizer = optimizer_fn()
      if (keras.mixed_precision.global_policy().name == "mixed_float16" and
          not isinstance(optimizer, keras.optimizers.LossScaleOptimizer)):
        optimizer = keras.mixed_precision.LossScaleOptimizer(optimizer)
      self.optimizer = optimizer
      self.optimizer.build(self.model.trainable_variables)
    self._synced_checkpoint = None  # Path whose values are in memory.
    self._initialized = False
    # True while evaluating in-memory weights (during training, or weights
    # loaded by `use_loaded_weights`): no restore from output_dir then.
    self._pinned = False
    self._inference_fns = {}  # key -> traced inference step
    self._train_loop = None
    self._pacer = HostLoopPacer(whole_loops=(
        isinstance(self.strategy, tf.distribute.TPUStrategy) or
        distribution.num_workers(self.strategy) > 1))
    self._grad_fn = tf.function(self._compute_gradients, jit_compile=use_xla)

  @property
  def global_step(self):
    return int(self.optimizer.iterations.numpy())

  # -- Checkpoints ----------------------------------------------------------

  def _restore_or_init(self, checkpoint):
    """Restores the latest checkpoint of output_dir, else runs init once."""
    latest = tf.train.latest_checkpoint(self.output_dir)
    if latest and latest != self._synced_checkpoint:
      self._synced_checkpoint = checkpointing.restore_newest_intact(
          checkpoint, self.output_dir, latest)
      logging.info("Resuming from checkpoint %s at step %d",
                   self._synced_checkpoint, self.global_step)
    elif not latest and not self._initialized and self.init_checkpoint_fn:
      self.init_checkpoint_fn(self.model)
    self._initialized = True

  def _save(self, manager):
    path = manager.save(checkpoint_number=self.global_step)
    if distribution.is_chief(self.strategy):
      self._synced_checkpoint = path
      logging.info("Saved checkpoint %s", path)
    else:  # Every worker must save; only the chief's copy is kept.
      shutil.rmtree(manager.directory, ignore_errors=True)

  # -- Training -------------------------------------------------------------

  def _compute_gradients(self, features, scale):
    variables = self.model.trainable_variables
    with tf.GradientTape() as tape:
      outputs = self.model(features, training=True)
      loss = tf.cast(self.task.loss(features, outputs), tf.float32) * scale
      scaled_loss = self.optimizer.scale_loss(loss)
    return loss, tape.gradient(scaled_loss, variables)

  def _replica_step(self, features):
    """One update on this replica's batch, as `accumulation` micro-batches."""
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
            batch_padding.take(micro, i), scale)
        return (i + 1, loss_sum + step_loss,
                [s + step_grads[j] for s, j in zip(grad_sums, present)])

      _, loss, sums = tf.while_loop(
          lambda i, *_: i < n, body,
          (tf.constant(1), loss, [grads[j] for j in present]))
      grads = list(grads)
      for j, total in zip(present, sums):
        grads[j] = total
    # Variables outside the loss (the pooler under SQuAD, as in the original)
    # have no gradient: leave them out so Keras does not warn about them.
    pairs = [(g, v) for g, v in zip(grads, self.model.trainable_variables)
             if g is not None]
    self.optimizer.apply([g for g, _ in pairs], [v for _, v in pairs])
    return loss, batch

  def _make_train_loop(self):
    strategy = self.strategy

    @tf.function
    def train_loop(iterator, num_steps):
      loss_sum = tf.constant(0.0)
      examples = tf.constant(0)
      for _ in tf.range(num_steps):
        loss, batch = strategy.run(self._replica_step, args=(next(iterator),))
        loss_sum += strategy.reduce(tf.distribute.ReduceOp.SUM, loss, None)
        examples += strategy.reduce(tf.distribute.ReduceOp.SUM, batch, None)
      return loss_sum / tf.cast(num_steps, tf.float32), examples

    return train_loop

  def _model_checkpoint(self, **more):
    return checkpointing.model_checkpoint(self.model, self.optimizer, **more)

  def _check_batch_size(self, dataset_fn):
    replicas = self.strategy.num_replicas_in_sync
    spec = dataset_fn(tf.distribute.InputContext(
        num_replicas_in_sync=replicas)).element_spec
    batch = tf.nest.flatten(spec)[0].shape[0]
    if batch is None or batch % self.accumulation:
      raise InputError(
          "per-replica batch %s (global batch / %d replicas) must be static "
          "and divisible by --gradient_accumulation_steps=%d" %
          (batch, replicas, self.accumulation))

  def _input_iterator(self, dataset_fn, step):
    """The training iterator positioned at `step`, and the full checkpoint.

    Iterators of the default strategy are checkpointed (exact, shuffle buffer
    included); distributed iterators are not trackable, so they resume by
    skipping the batches of the first `step` steps (exact in deterministic
    mode, where the input order is reproducible).
    """
    def untuned_fn(ctx):
      return input_pipeline.without_autotune(dataset_fn(ctx))

    iterator = iter(self.strategy.distribute_datasets_from_function(
        untuned_fn))
    # Only the default strategy's iterator is a (checkpointable) tf.data one.
    if isinstance(iterator, tf.data.Iterator):
      path = self._synced_checkpoint
      names = [n for n, _ in tf.train.list_variables(path)] if path else []
      if not step or any(n.startswith("data/") for n in names):
        if step:
          tf.train.Checkpoint(data=iterator).read(path).expect_partial()
        return iterator, self._model_checkpoint(data=iterator)

    def skipping_fn(ctx):
      per_pipeline = ctx.num_replicas_in_sync // ctx.num_input_pipelines
      return untuned_fn(ctx).skip(step * per_pipeline)

    logging.info("Input: skipping the batches of %d steps", step)
    iterator = iter(self.strategy.distribute_datasets_from_function(
        skipping_fn))
    return iterator, self._model_checkpoint()

  def _next_stop(self, step, num_steps):
    stop = min(num_steps, step + self.iterations_per_loop)
    if self.save_checkpoints_steps:
      every = self.save_checkpoints_steps
      stop = min(stop, (step // every + 1) * every)
    if self.unfreeze and self.unfreeze.next_boundary(step):
      stop = min(stop, self.unfreeze.next_boundary(step))
    return stop

  def _enter_unfreeze_phase(self, step):
    """The trainable layers of `step`'s phase; a new set retraces the step."""
    if self.unfreeze.enter(self.model, self.optimizer, step):
      self._grad_fn = tf.function(self._compute_gradients,
                                  jit_compile=self.use_xla)
      self._train_loop = self._make_train_loop()

  def train(self, dataset_fn, num_steps, eval_hook=None):
    """Trains until `global_step == num_steps`, resuming from output_dir.

    Args:
      dataset_fn: `fn(tf.distribute.InputContext)` -> this input pipeline's
        dataset, batched at the per-replica batch size (divisible by
        `gradient_accumulation_steps`), e.g. `training_dataset_fn(...)`.
      num_steps: total optimizer updates of the run (like `max_steps`).
      eval_hook: optional `bert_tf.training.eval_hook.EvalHook`: at its
        evaluation points a checkpoint is saved, then the hook evaluates
        (and may end training early, for good).

    Returns:
      One stats dict per host loop run now (step, loss, learning_rate,
      steps_per_sec, examples_per_sec); empty if already trained.
    """
    self._restore_or_init(self._model_checkpoint())
    step = self.global_step
    chief = distribution.is_chief(self.strategy)
    if eval_hook:
      eval_hook.begin(step, chief)
      if eval_hook.is_pending(step, num_steps):
        self._evaluate_with(eval_hook)
      if eval_hook.stopped:
        logging.info("Stopped early at step %d (%s); not training.",
                     eval_hook.stopped["global_step"], run_files.STOP_FILE)
        return []
    if step >= num_steps:
      logging.info("Already trained to step %d (num_steps=%d); not training.",
                   step, num_steps)
      return []
    self._check_batch_size(dataset_fn)
    iterator, checkpoint = self._input_iterator(dataset_fn, step)
    manager = checkpointing.checkpoint_manager(
        checkpoint, self.output_dir, self.strategy, self.keep_checkpoint_max)
    self._train_loop = self._train_loop or self._make_train_loop()
    writer = (tf.summary.create_file_writer(self.output_dir) if chief
              else tf.summary.create_noop_writer())
    bar = Progress(num_steps, initial=step, desc="train",
                   enabled=self.progress and chief)
    logging.info("Training from step %d to %d", step, num_steps)
    history = []
    with writer.as_default(), bar:
      while step < num_steps:
        if self.unfreeze:
          self._enter_unfreeze_phase(step)
        start = time.time()
        stop = self._next_stop(step, num_steps)
        if eval_hook:
          stop = min(stop, eval_hook.next_stop(step, num_steps))
        loss, examples = self._run_steps(iterator, step, stop, bar,
                                         dataset_fn)
        seconds = time.time() - start
        stats = {"loss": loss,
                 "learning_rate": float(self.optimizer.learning_rate),
                 "steps_per_sec": (stop - step) / seconds,
                 "examples_per_sec": examples / seconds}
        write_scalars(stats, stop)
        logging.info("step %d/%d: loss = %.5f, %.1f examples/s", stop,
                     num_steps, loss, stats["examples_per_sec"])
        bar.logged()
        history.append(dict(stats, step=stop))
        step = stop
        evaluate = eval_hook and eval_hook.is_due(step, num_steps)
        if (self.save_checkpoints_steps and
            step % self.save_checkpoints_steps == 0) or (
                step == num_steps or evaluate):
          self._save(manager)
        if evaluate and self._evaluate_with(eval_hook):
          break
    writer.flush()
    return history

  def _run_steps(self, iterator, step, stop, bar, dataset_fn):
    """Runs the steps step+1..stop (one host loop) in calls of the traced
    loop sized by the pacer, the bar moving after each; -> (mean loss,
    examples)."""
    losses, examples, done = [], 0, step
    while done < stop:
      n = self._pacer.size(stop - done)
      start = time.time()
      try:
        loss, count = self._train_loop(iterator, tf.constant(n))
      except tf.errors.DataLossError as e:
        raise InputError(input_pipeline.damaged_input(
            getattr(dataset_fn, "input_files", ()), e)) from e
      loss, count = float(loss), int(count)  # Waits for the steps.
      self._pacer.record(n, time.time() - start)
      if not np.isfinite(loss):
        # A NaN/inf loss only spreads: stop before saving it.
        raise InputError(
            "training loss is %s in steps %d..%d: check --learning_rate, "
            "the labels and the inputs (nothing of these steps was "
            "saved)" % (loss, done + 1, done + n))
      losses.append((loss, n))
      examples, done = examples + count, done + n
      bar.update(n, loss=loss, examples=count)
    if len(losses) == 1:
      return losses[0][0], examples
    return sum(loss * n for loss, n in losses) / (stop - step), examples

  def _evaluate_with(self, eval_hook):
    """`eval_hook.evaluate` on the weights in memory; True: stop training."""
    self._pinned = True
    try:
      return eval_hook.evaluate(self)
    finally:
      self._pinned = False

  # -- Evaluation and prediction -------------------------------------------

  def _inference_batches(self, dataset, batch_size, fn, key):
    """`inference.real_rows` with this trainer's weights: the latest
    checkpoint of output_dir unless weights are pinned in memory."""
    if not self._pinned:
      self._restore_or_init(self._model_checkpoint())
    chief = distribution.is_chief(self.strategy)
    with Progress(None, desc=key[0], unit="batch",
                  enabled=self.progress and chief) as bar:
      for batch in inference.real_rows(self.strategy, self.model, dataset,
                                       batch_size, fn, self._inference_fns,
                                       key):
        yield batch
        bar.update(1)

  def use_loaded_weights(self, global_step):
    """Evaluates/predicts with the weights now in `self.model` (e.g. loaded
    from output_dir/best/) instead of output_dir's latest checkpoint, and
    reports `global_step` as their step."""
    self._initialized = True
    self._pinned = True
    self.optimizer.iterations.assign(global_step)

  def predict(self, dataset, batch_size, feature_keys=()):
    """Yields one dict of numpy values per example, in input order.

    Args:
      dataset: global batches (last one may be partial), e.g. `eval_dataset`.
      batch_size: the global batch size the dataset was batched with.
      feature_keys: input features to pass through (e.g. `unique_ids`).
    """
    def fn(features, outputs):
      result = dict(outputs)
      result.update({k: features[k] for k in feature_keys})
      return result

    key = ("predict",) + tuple(feature_keys)
    for batch in self._inference_batches(dataset, batch_size, fn, key):
      for i in range(len(next(iter(batch.values())))):
        yield {k: v[i] for k, v in batch.items()}

  def evaluate(self, dataset, batch_size):
    """Returns `{metric: sum(numerator)/sum(denominator), "global_step"}`."""
    def fn(features, outputs):
      metrics = self.task.metrics(features, outputs)
      if metrics is None:
        raise ValueError("evaluate() needs a task with metrics()")
      return {"%s/%s" % (name, part): tf.cast(value, tf.float64)
              for name, pair in metrics.items()
              for part, value in zip(("num", "den"), pair)}

    totals = {}
    for batch in self._inference_batches(dataset, batch_size, fn,
                                         ("evaluate",)):
      for key, values in batch.items():
        totals[key] = totals.get(key, 0.0) + float(np.sum(values))
    names = sorted({key.rsplit("/", 1)[0] for key in totals})
    results = {n: totals[n + "/num"] / totals[n + "/den"]
               if totals[n + "/den"] else float("nan") for n in names}
    results["global_step"] = self.global_step
    return results
