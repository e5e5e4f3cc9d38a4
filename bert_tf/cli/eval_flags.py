"""Flags for evaluation during training, the best checkpoint, early stopping.

`script_runner.define_finetuning_flags` defines them for every fine-tuning
script (run_pretraining.py: `define_eval_flags(epochs=False,
predict_checkpoint=False)`). A script adopts them with three calls around
its own full dev evaluation `eval_fn(trainer) -> {metric: value}` (the
metrics of its eval_results file, for the trainer's current weights):

    check_eval_flags(FLAGS, training=FLAGS.do_train)      # in flag checks
    hook = eval_hook(FLAGS, eval_fn, FLAGS.bert_config_file,
                     steps_per_epoch=len(train_examples) / batch_size,
                     metric_names=("eval_accuracy", "eval_loss"))
    trainer.train(dataset_fn, num_train_steps, eval_hook=hook)
    restore_predict_checkpoint(FLAGS, trainer)  # before --do_eval/predict

Outputs (see bert_tf/training/eval_hook.py): output_dir/eval_history.jsonl,
TensorBoard scalars in output_dir/eval/, output_dir/best/ (bert_model.ckpt +
bert_config.json + best.json, an original-format checkpoint with the task
head: a valid --init_checkpoint), output_dir/early_stopping.json.
"""

import os

from absl import flags
from absl import logging
import tensorflow as tf

from bert_tf.checkpoints import checkpoint_io
from bert_tf.io_utils import InputError
from bert_tf.training import eval_hook as eval_hook_lib


def define_eval_flags(epochs=True, predict_checkpoint=True):
  """Defines the flags (once per program)."""
  flags.DEFINE_integer(
      "eval_every_steps", None,
      "During training, run the full dev evaluation every N steps and at the "
      "last step: metrics go to output_dir/eval_history.jsonl and to "
      "TensorBoard (output_dir/eval/).")
  if epochs:
    flags.DEFINE_float(
        "eval_every_epochs", None,
        "Like --eval_every_steps, every this many epochs (e.g. 0.5).")
  flags.DEFINE_string(
      "best_metric", None,
      "With periodic evaluation: keep the checkpoint with the best value of "
      "this metric (its eval_results name, e.g. eval_accuracy, f1) in "
      "output_dir/best/ as bert_model.ckpt + bert_config.json.")
  flags.DEFINE_enum("best_mode", "max", list(eval_hook_lib.MODES),
                    "Whether a higher (max) or lower (min) --best_metric is "
                    "better.")
  flags.DEFINE_integer(
      "early_stopping_patience", None,
      "End training after this many evaluations without a better "
      "--best_metric. The run then counts as finished.")
  if predict_checkpoint:
    flags.DEFINE_enum(
        "predict_checkpoint", "latest", ["latest", "best"],
        "Weights for --do_eval / --do_predict: the latest checkpoint of "
        "output_dir (as the original) or output_dir/best/.")


def _every(flag_values):
  """(--eval_every_steps, --eval_every_epochs or None if not defined)."""
  epochs = (flag_values["eval_every_epochs"].value
            if "eval_every_epochs" in flag_values else None)
  return flag_values.eval_every_steps, epochs


def check_eval_flags(flag_values, training):
  """One-line InputErrors for inconsistent evaluation flags."""
  steps, epochs = _every(flag_values)
  # Their ranges are checked with every flag's (`flag_ranges`).
  if steps is not None and epochs is not None:
    raise InputError("give only one of --eval_every_steps and "
                     "--eval_every_epochs")
  periodic = steps is not None or epochs is not None
  if periodic and not training:
    raise InputError("--eval_every_%s needs --do_train" %
                     ("steps" if steps is not None else "epochs"))
  if flag_values.best_metric and not periodic:
    raise InputError("--best_metric needs --eval_every_steps or "
                     "--eval_every_epochs")
  patience = flag_values.early_stopping_patience
  if patience is not None:
    if patience < 1:
      raise InputError("--early_stopping_patience must be >= 1, got %d" %
                       patience)
    if not flag_values.best_metric:
      raise InputError("--early_stopping_patience needs --best_metric")


def _save_tf1(prefix, model, global_step):
  checkpoint_io.save_tf1_checkpoint(prefix, model.tf1_variables(),
                                    global_step)


def eval_hook(flag_values, eval_fn, config_file, steps_per_epoch=None,
              metric_names=None):
  """The `EvalHook` the flags ask for, or None without periodic evaluation.

  Args:
    flag_values: parsed flags with the eval flags and `output_dir`.
    eval_fn: `fn(trainer)` -> {metric: value}, the task's full dev
      evaluation of the trainer's current weights.
    config_file: the bert_config.json copied into best/.
    steps_per_epoch: training steps per epoch (for --eval_every_epochs).
    metric_names: the names eval_fn returns, to check --best_metric early.
  """
  steps, epochs = _every(flag_values)
  if epochs is not None:
    steps = max(1, int(steps_per_epoch * epochs))
  if steps is None:
    return None
  return eval_hook_lib.EvalHook(
      eval_fn, flag_values.output_dir, steps,
      best_metric=flag_values.best_metric, best_mode=flag_values.best_mode,
      patience=flag_values.early_stopping_patience, save_fn=_save_tf1,
      config_file=config_file, metric_names=metric_names)


def restore_predict_checkpoint(flag_values, trainer):
  """With --predict_checkpoint=best, loads output_dir/best/ into `trainer`
  for its evaluate/predict calls (its step becomes the reported one)."""
  if flag_values.predict_checkpoint != "best":
    return
  folder = os.path.join(flag_values.output_dir, eval_hook_lib.BEST_DIR)
  prefix = os.path.join(folder, eval_hook_lib.BEST_CHECKPOINT)
  if not tf.io.gfile.exists(prefix + ".index"):
    raise InputError("--predict_checkpoint=best: %s holds no checkpoint "
                     "(train with --best_metric)" % folder)
  report = checkpoint_io.init_from_checkpoint(prefix,
                                              trainer.model.tf1_variables())
  if report.not_in_checkpoint:
    raise InputError("%s: no variable %s (a checkpoint of another task?)" %
                     (prefix, report.not_in_checkpoint[0]))
  step = int(tf.train.load_checkpoint(prefix).get_tensor("global_step"))
  trainer.use_loaded_weights(step)
  logging.info("--predict_checkpoint=best: %s (step %d)", prefix, step)
