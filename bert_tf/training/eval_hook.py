"""Evaluation during training: history, TensorBoard, best model, early stop.

`Trainer.train(..., eval_hook=hook)` stops every `every_steps` steps (and at
the last step), saves its checkpoint, then calls `hook.evaluate(trainer)`,
which runs `eval_fn(trainer)` -- the script's full dev evaluation of the
trainer's weights, returning the metrics dict of its eval_results file --
and

  * appends `{"global_step": s, <metric>: value, ...}` to
    output_dir/eval_history.jsonl (rewritten atomically: no torn lines);
  * writes the numeric metrics as TensorBoard scalars to output_dir/eval/,
    the Estimator's eval folder, next to the training summaries;
  * with `best_metric`: keeps the best model so far in output_dir/best/
    (`save_fn(prefix, model, step)` writes it, e.g. an original-format
    bert_model.ckpt; plus bert_config.json and best.json). A new best/ is
    built in best.tmp/ and swapped in by renames, so a kill at any moment
    leaves a complete best/ (or best.old/, put back on the next start);
  * with `patience`: ends training after that many evaluations without
    improvement and writes output_dir/early_stopping.json, so re-running the
    same command does not train again (delete the file to go on).

The names and readers of these files are in `run_files`. On resume the
state comes back from the files: history entries after the restored step (a
lost stretch of the run) are dropped, and an evaluation a kill interrupted is
run again at its step (the trainer saved the checkpoint first). Only the
chief writes; every worker evaluates and decides alike.

Example:
    hook = EvalHook(lambda trainer: {"eval_accuracy": 0.8}, "out", 100,
                    best_metric="eval_accuracy", patience=3,
                    save_fn=save_tf1, config_file="bert_config.json")
    trainer.train(dataset_fn, num_steps, eval_hook=hook)
"""

import json
import math
import os

from absl import logging
import numpy as np
import tensorflow as tf

from bert_tf.io_utils import InputError
from bert_tf.runs import run_files
from bert_tf.runs.run_files import BEST_CHECKPOINT
from bert_tf.runs.run_files import BEST_CONFIG
from bert_tf.runs.run_files import BEST_DIR
from bert_tf.runs.run_files import BEST_FILE
from bert_tf.runs.run_files import EVAL_DIR
from bert_tf.runs.run_files import HISTORY_FILE
from bert_tf.runs.run_files import STOP_FILE
from bert_tf.training.choices import BEST_MODES
from bert_tf.training.progress import write_scalars


def _plain(value):
  """JSON-friendly number (numpy scalars -> int / float)."""
  if isinstance(value, (bool, np.bool_)):
    return bool(value)
  if isinstance(value, (int, np.integer)):
    return int(value)
  if isinstance(value, (float, np.floating)):
    return float(value)
  return value


class EvalHook:
  """Periodic full evaluation, its records, the best model, early stopping.

  Args:
    eval_fn: `fn(trainer)` -> {metric name: value}, evaluating the
      trainer's current weights (a `global_step` key is ignored; the hook
      adds it).
    output_dir: the run's output_dir.
    every_steps: evaluate when the global step is a multiple of this, and at
      the last step.
    best_metric: metric to select the best model by; None: no best/.
    best_mode: "max" or "min" (strict improvement).
    patience: stop after this many evaluations without improvement of
      `best_metric`; None: never.
    save_fn: `fn(prefix, model, global_step)` writing a checkpoint at
      `prefix` (needed with `best_metric`).
    config_file: copied into best/ as bert_config.json.
    metric_names: if given, `best_metric` must be one of them (checked now,
      before any training).
    listener: `fn(trainer, metrics)` called after each evaluation (e.g.
      Keras callbacks); True stops training.
  """

  def __init__(
    self,
    eval_fn,
    output_dir,
    every_steps,
    best_metric=None,
    best_mode="max",
    patience=None,
    save_fn=None,
    config_file=None,
    metric_names=None,
    listener=None,
  ):
    if every_steps < 1:
      raise InputError("eval every_steps must be >= 1, got %d" % every_steps)
    if best_mode not in BEST_MODES:
      raise InputError("--best_mode=%s: must be max or min" % best_mode)
    if patience is not None and not best_metric:
      raise InputError("--early_stopping_patience needs --best_metric")
    if best_metric and save_fn is None:
      raise ValueError("best_metric needs a save_fn")
    if best_metric and metric_names and best_metric not in metric_names:
      raise InputError(
        "--best_metric=%s: not an evaluation metric (%s)"
        % (best_metric, ", ".join(sorted(metric_names)))
      )
    self.eval_fn = eval_fn
    self.output_dir = os.fspath(output_dir)
    self.every_steps = every_steps
    self.best_metric = best_metric
    self.best_mode = best_mode
    self.patience = patience
    self.save_fn = save_fn
    self.config_file = config_file
    self.listener = listener
    self.history = []
    self.best = None  # best.json of best/: metric, mode, value, global_step.
    self.stopped = None  # early_stopping.json once stopped.
    self._chief = True
    self._writer = None

  def _path(self, *names):
    return os.path.join(self.output_dir, *names)

  # -- State ----------------------------------------------------------------

  def begin(self, step, is_chief=True):
    """Loads the state of `output_dir` for a (resumed) run at `step`."""
    self._chief = is_chief
    best, tmp, old = (
      self._path(BEST_DIR),
      self._path(BEST_DIR + ".tmp"),
      self._path(BEST_DIR + ".old"),
    )
    if is_chief:  # Finish or undo a swap a kill interrupted.
      if not tf.io.gfile.exists(best) and tf.io.gfile.exists(old):
        tf.io.gfile.rename(old, best)
      for leftover in (tmp, old):
        if tf.io.gfile.exists(leftover):
          tf.io.gfile.rmtree(leftover)
    history = run_files.read_history(self._path(HISTORY_FILE))
    self.history = [h for h in history if h["global_step"] <= step]
    if len(self.history) < len(history):
      logging.info(
        "Dropping %d evaluations after step %d from %s",
        len(history) - len(self.history),
        step,
        HISTORY_FILE,
      )
      if is_chief:
        run_files.write_history(self._path(HISTORY_FILE), self.history)
    self.best = None
    if self.best_metric:
      best_json = run_files.read_best(best)
      if best_json and (best_json["metric"], best_json["mode"]) == (
        self.best_metric,
        self.best_mode,
      ):
        self.best = best_json
    self.stopped = run_files.read_stopped(self._path(STOP_FILE))

  def is_due(self, step, num_steps):
    """True when `step` is an evaluation point."""
    return step > 0 and (step % self.every_steps == 0 or step == num_steps)

  def next_stop(self, step, num_steps):
    """The first evaluation point after `step`."""
    return min(num_steps, (step // self.every_steps + 1) * self.every_steps)

  def is_pending(self, step, num_steps):
    """True if `step` is an evaluation point without its evaluation (a kill
    came between the checkpoint and the record)."""
    return (
      self.is_due(step, num_steps)
      and not self.stopped
      and all(h["global_step"] != step for h in self.history)
    )

  # -- Evaluation -----------------------------------------------------------

  def _improves(self, value):
    if value is None or math.isnan(value):
      return False
    if self.best is None:
      return True
    return (
      value > self.best["value"]
      if self.best_mode == "max"
      else value < self.best["value"]
    )

  def _evals_since_best(self):
    best_step = self.best["global_step"] if self.best else -1
    return sum(1 for h in self.history if h["global_step"] > best_step)

  def evaluate(self, trainer):
    """Runs `eval_fn`, records it; returns True when training should stop."""
    step = trainer.global_step
    metrics = {
      k: _plain(v)
      for k, v in self.eval_fn(trainer).items()
      if k != "global_step"
    }
    record = dict(global_step=int(step), **metrics)
    logging.info("Evaluation at step %d: %s", step, json.dumps(metrics))
    value = None
    if self.best_metric:
      if self.best_metric not in metrics:
        raise InputError(
          "--best_metric=%s: not an evaluation metric (%s)"
          % (self.best_metric, ", ".join(sorted(metrics)))
        )
      value = float(metrics[self.best_metric])
    if self.best_metric and self._improves(value):
      self.best = {
        "metric": self.best_metric,
        "mode": self.best_mode,
        "value": value,
        "global_step": int(step),
        "metrics": metrics,
      }
      if self._chief:
        self._save_best(trainer.model)
      logging.info("New best %s = %s at step %d", self.best_metric, value, step)
    self.history.append(record)
    if self._chief:
      run_files.write_history(self._path(HISTORY_FILE), self.history)
      self._write_summaries(step, metrics)
    if self.patience is not None and self._evals_since_best() >= self.patience:
      self.stopped = {
        "global_step": int(step),
        "patience": self.patience,
        "best": self.best,
      }
      if self._chief:
        run_files.write_json(self._path(STOP_FILE), self.stopped)
      logging.info(
        "Early stopping at step %d: %d evaluations without a better %s",
        step,
        self.patience,
        self.best_metric,
      )
    stop = bool(self.stopped)
    if self.listener is not None:
      stop = bool(self.listener(trainer, metrics)) or stop
    return stop

  def _save_best(self, model):
    """Builds best.tmp/ and swaps it in for best/ (renames only)."""
    best, tmp, old = (
      self._path(BEST_DIR),
      self._path(BEST_DIR + ".tmp"),
      self._path(BEST_DIR + ".old"),
    )
    if tf.io.gfile.exists(tmp):
      tf.io.gfile.rmtree(tmp)
    tf.io.gfile.makedirs(tmp)
    self.save_fn(
      os.path.join(tmp, BEST_CHECKPOINT), model, self.best["global_step"]
    )
    if self.config_file:
      tf.io.gfile.copy(self.config_file, os.path.join(tmp, BEST_CONFIG))
    run_files.write_json(os.path.join(tmp, BEST_FILE), self.best)
    if tf.io.gfile.exists(best):
      tf.io.gfile.rename(best, old)
    tf.io.gfile.rename(tmp, best)
    if tf.io.gfile.exists(old):
      tf.io.gfile.rmtree(old)

  def _write_summaries(self, step, metrics):
    if self._writer is None:
      self._writer = tf.summary.create_file_writer(self._path(EVAL_DIR))
    numbers = {
      k: v
      for k, v in metrics.items()
      if isinstance(v, (int, float)) and not isinstance(v, bool)
    }
    with self._writer.as_default():
      write_scalars(numbers, step)
    self._writer.flush()
