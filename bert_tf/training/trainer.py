"""`Trainer`: the Estimator replacement (train / evaluate / predict).

A custom training loop under a `tf.distribute` strategy: host loops of
`iterations_per_loop` steps (on one host other than a TPU, run as calls of
about two seconds so that progress shows live: `progress.py`), optional XLA
for the forward/backward pass, dynamic loss scaling under `mixed_float16`,
gradient accumulation (the steps: `train_steps.py`), checkpoints and
TensorBoard summaries (`progress.py`) in `output_dir`, and resume from the
latest checkpoint (model, optimizer slots, dropout RNG state, step and
input position: the iterator is checkpointed on the default strategy;
distributed iterators resume by skipping the batches already consumed,
exact in deterministic mode).
The global step is `optimizer.iterations` (one per update); batch sizes
stay global and per update, whatever `gradient_accumulation_steps`.

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

from bert_tf.io_utils import InputError
from bert_tf.runs import run_files
from bert_tf.training import checkpointing
from bert_tf.training import distribution
from bert_tf.training import inference
from bert_tf.training import train_steps
from bert_tf.training.progress import HostLoopPacer
from bert_tf.training.progress import Progress
from bert_tf.training.progress import write_scalars


class Trainer:
  """Trains, evaluates and predicts a Keras model under a strategy."""

  def __init__(
    self,
    task,
    optimizer_fn,
    output_dir,
    strategy=None,
    iterations_per_loop=1000,
    save_checkpoints_steps=1000,
    keep_checkpoint_max=5,
    gradient_accumulation_steps=1,
    use_xla=False,
    init_checkpoint_fn=None,
    progress=True,
    unfreeze_schedule=None,
  ):
    if gradient_accumulation_steps < 1:
      raise InputError(
        "--gradient_accumulation_steps must be >= 1, got %d"
        % gradient_accumulation_steps
      )
    if iterations_per_loop < 1:
      raise InputError(
        "--iterations_per_loop must be >= 1, got %d" % iterations_per_loop
      )
    self.strategy = strategy or tf.distribute.get_strategy()
    self.output_dir = os.fspath(output_dir)
    self.iterations_per_loop = iterations_per_loop
    self.save_checkpoints_steps = save_checkpoints_steps
    self.keep_checkpoint_max = keep_checkpoint_max
    self.accumulation = gradient_accumulation_steps
    self.init_checkpoint_fn = init_checkpoint_fn
    self.progress = progress
    self.task = task
    # training.unfreezing.UnfreezeSchedule: frozen layers by global step.
    self.unfreeze = unfreeze_schedule
    with self.strategy.scope():
      self.model = task.build_model()
      optimizer = optimizer_fn()
      if (
        keras.mixed_precision.global_policy().name == "mixed_float16"
        and not isinstance(optimizer, keras.optimizers.LossScaleOptimizer)
      ):
        optimizer = keras.mixed_precision.LossScaleOptimizer(optimizer)
      self.optimizer = optimizer
      self.optimizer.build(self.model.trainable_variables)
    self._synced_checkpoint = None  # Path whose values are in memory.
    self.last_loss = None  # of the latest host loop
    self._initialized = False
    # True while evaluating in-memory weights (during training, or weights
    # loaded by `use_loaded_weights`): no restore from output_dir then.
    self._pinned = False
    self._inference_fns = {}  # key -> traced inference step
    self._train_loop = None
    self._pacer = HostLoopPacer(
      whole_loops=(
        isinstance(self.strategy, tf.distribute.TPUStrategy)
        or distribution.num_workers(self.strategy) > 1
      )
    )
    self._update = train_steps.UpdateStep(
      self.model,
      task.loss,
      self.optimizer,
      gradient_accumulation_steps,
      use_xla,
    )

  @property
  def global_step(self):
    return int(self.optimizer.iterations.numpy())

  # -- Checkpoints ----------------------------------------------------------

  def _restore_or_init(self, checkpoint):
    """Restores the latest checkpoint of output_dir, else runs init once."""
    latest = tf.train.latest_checkpoint(self.output_dir)
    if latest and latest != self._synced_checkpoint:
      self._synced_checkpoint = checkpointing.restore_newest_intact(
        checkpoint, self.output_dir, latest
      )
      logging.info(
        "Resuming from checkpoint %s at step %d",
        self._synced_checkpoint,
        self.global_step,
      )
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

  def _make_train_loop(self):
    return train_steps.make_train_loop(self.strategy, self._update.replica_step)

  def _model_checkpoint(self, **more):
    return checkpointing.model_checkpoint(self.model, self.optimizer, **more)

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
      self._update.retrace()
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
        logging.info(
          "Stopped early at step %d (%s); not training.",
          eval_hook.stopped["global_step"],
          run_files.STOP_FILE,
        )
        return []
    if step >= num_steps:
      logging.info(
        "Already trained to step %d (num_steps=%d); not training.",
        step,
        num_steps,
      )
      return []
    train_steps.check_batch_size(self.strategy, dataset_fn, self.accumulation)
    iterator, checkpoint = train_steps.resumed_input(
      self.strategy,
      dataset_fn,
      step,
      self._synced_checkpoint,
      self._model_checkpoint,
    )
    manager = checkpointing.checkpoint_manager(
      checkpoint, self.output_dir, self.strategy, self.keep_checkpoint_max
    )
    self._train_loop = self._train_loop or self._make_train_loop()
    writer = (
      tf.summary.create_file_writer(self.output_dir)
      if chief
      else tf.summary.create_noop_writer()
    )
    bar = Progress(
      num_steps, initial=step, desc="train", enabled=self.progress and chief
    )
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
        loss, examples = train_steps.run_host_loop(
          self._train_loop,
          self._pacer,
          iterator,
          step,
          stop,
          bar,
          getattr(dataset_fn, "input_files", ()),
        )
        seconds = time.time() - start
        stats = {
          "loss": loss,
          "learning_rate": float(self.optimizer.learning_rate),
          "steps_per_sec": (stop - step) / seconds,
          "examples_per_sec": examples / seconds,
        }
        write_scalars(stats, stop)
        logging.info(
          "step %d/%d: loss = %.5f, %.1f examples/s",
          stop,
          num_steps,
          loss,
          stats["examples_per_sec"],
        )
        bar.logged()
        history.append(dict(stats, step=stop))
        self.last_loss = loss
        step = stop
        evaluate = eval_hook and eval_hook.is_due(step, num_steps)
        if (
          self.save_checkpoints_steps
          and step % self.save_checkpoints_steps == 0
        ) or (step == num_steps or evaluate):
          self._save(manager)
        if evaluate and self._evaluate_with(eval_hook):
          break
    writer.flush()
    return history

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
    with Progress(
      None, desc=key[0], unit="batch", enabled=self.progress and chief
    ) as bar:
      for batch in inference.real_rows(
        self.strategy,
        self.model,
        dataset,
        batch_size,
        fn,
        self._inference_fns,
        key,
      ):
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
      return {
        "%s/%s" % (name, part): tf.cast(value, tf.float64)
        for name, pair in metrics.items()
        for part, value in zip(("num", "den"), pair)
      }

    totals = {}
    for batch in self._inference_batches(
      dataset, batch_size, fn, ("evaluate",)
    ):
      for key, values in batch.items():
        totals[key] = totals.get(key, 0.0) + float(np.sum(values))
    names = sorted({key.rsplit("/", 1)[0] for key in totals})
    results = {
      n: totals[n + "/num"] / totals[n + "/den"]
      if totals[n + "/den"]
      else float("nan")
      for n in names
    }
    results["global_step"] = self.global_step
    return results
