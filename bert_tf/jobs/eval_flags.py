"""Flags for evaluation during training, the best checkpoint, early stopping.

`finetune_flags.define_flags` defines them for every fine-tuning script
(run_pretraining.py: `define_eval_flags(epochs=False,
predict_checkpoint=False)`); `check_eval_flags` checks them before any work,
and `wiring.eval_hook` / `restore_predict_checkpoint` act on them.
TensorFlow-free, so `--help` answers at once.

Outputs (see bert_tf/training/eval_hook.py): output_dir/eval_history.jsonl,
TensorBoard scalars in output_dir/eval/, output_dir/best/ (bert_model.ckpt +
bert_config.json + best.json, an original-format checkpoint with the task
head: a valid --init_checkpoint), output_dir/early_stopping.json.
"""

from absl import flags

from bert_tf.io_utils import InputError
from bert_tf.runtime import flag_checks
from bert_tf.runtime import flag_needs
from bert_tf.training.choices import BEST_MODES


def define_eval_flags(epochs=True, predict_checkpoint=True):
  """Defines the flags (once per program)."""
  flags.DEFINE_integer(
    "eval_every_steps",
    None,
    "During training, run the full dev evaluation every N steps and at the "
    "last step: metrics go to output_dir/eval_history.jsonl and to "
    "TensorBoard (output_dir/eval/).",
  )
  flag_checks.positive("eval_every_steps")
  flag_needs.requires("eval_every_steps", "do_train")
  if epochs:
    flags.DEFINE_float(
      "eval_every_epochs",
      None,
      "Like --eval_every_steps, every this many epochs (e.g. 0.5).",
    )
    flag_checks.positive("eval_every_epochs")
    flag_needs.requires("eval_every_epochs", "do_train")
  flags.DEFINE_string(
    "best_metric",
    None,
    "With periodic evaluation: keep the checkpoint with the best value of "
    "this metric (its eval_results name, e.g. eval_accuracy, f1) in "
    "output_dir/best/ as bert_model.ckpt + bert_config.json.",
  )
  flag_needs.requires("best_metric", "eval_every_steps", "eval_every_epochs")
  flags.DEFINE_enum(
    "best_mode",
    "max",
    list(BEST_MODES),
    "Whether a higher (max) or lower (min) --best_metric is better.",
  )
  flag_needs.requires("best_mode", "best_metric")
  flags.DEFINE_integer(
    "early_stopping_patience",
    None,
    "End training after this many evaluations without a better "
    "--best_metric. The run then counts as finished.",
  )
  flag_checks.positive("early_stopping_patience")
  flag_needs.requires("early_stopping_patience", "best_metric")
  if predict_checkpoint:
    flags.DEFINE_enum(
      "predict_checkpoint",
      "latest",
      ["latest", "best"],
      "Weights for --do_eval / --do_predict: the latest checkpoint of "
      "output_dir (as the original) or output_dir/best/.",
    )
    # Without --best_metric it reads the best/ an earlier run kept.
    flag_needs.requires("predict_checkpoint=best", "do_eval", "do_predict")


def eval_every(settings):
  """(--eval_every_steps, --eval_every_epochs or None if not defined)."""
  return (
    settings.eval_every_steps,
    getattr(settings, "eval_every_epochs", None),
  )


def check_eval_flags(settings, training):
  """One-line InputErrors for inconsistent evaluation flags."""
  steps, epochs = eval_every(settings)
  # Their ranges are declared at their definitions (`flag_checks`).
  if steps is not None and epochs is not None:
    raise InputError(
      "give only one of --eval_every_steps and --eval_every_epochs"
    )
  periodic = steps is not None or epochs is not None
  if periodic and not training:
    raise InputError(
      "--eval_every_%s needs --do_train"
      % ("steps" if steps is not None else "epochs")
    )
  if settings.best_metric and not periodic:
    raise InputError(
      "--best_metric needs --eval_every_steps or --eval_every_epochs"
    )
  patience = settings.early_stopping_patience
  if patience is not None:
    if patience < 1:
      raise InputError(
        "--early_stopping_patience must be >= 1, got %d" % patience
      )
    if not settings.best_metric:
      raise InputError("--early_stopping_patience needs --best_metric")
