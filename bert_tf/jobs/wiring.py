"""Settings (a Job config or parsed flags) -> strategy, precision, optimizer,
init_checkpoint, `Trainer` and the evaluation hook.

The wiring the original scripts did with `RunConfig` + `TPUEstimator`,
shared by the fine-tuning skeleton (`bert_tf.jobs.finetune`) and
run_pretraining.py. The flags themselves are defined TensorFlow-free
(`finetune_flags.define_flags`, `engine_flags`, `eval_flags`).

Example (inside an absl `main`):
    check_do_flags(FLAGS, "do_train", "do_eval", "do_predict")
    check_case(FLAGS.do_lower_case, FLAGS.init_checkpoint)
    steps, warmup = train_steps(len(examples), FLAGS.train_batch_size,
                                FLAGS.num_train_epochs,
                                FLAGS.warmup_proportion)
    trainer = build_trainer(FLAGS, ClassificationTask(config, 2, 128),
                            steps, warmup)
    trainer.train(dataset_fn, steps)
    write_eval_results(os.path.join(FLAGS.output_dir, "eval_results.txt"),
                       {"eval_loss": 0.5, "global_step": steps})
"""

import os

from absl import logging
import tensorflow as tf

from bert_tf.checkpoints import checkpoint_io
from bert_tf.io_utils import InputError
from bert_tf.jobs import engine_flags
from bert_tf.jobs import eval_flags
from bert_tf.runs import run_files
from bert_tf.tokenizers import tokenization
from bert_tf.training import distribution
from bert_tf.training import eval_hook as eval_hook_lib
from bert_tf.training import optimization
from bert_tf.training import unfreezing
from bert_tf.training.trainer import Trainer


def check_do_flags(settings, *names):
  """InputError unless at least one of the `--do_*` flags is set (and
  --train_records, where a script has it, comes with --do_train)."""
  if not any(getattr(settings, n) for n in names):
    raise InputError(
      "At least one of %s must be True." % ", ".join("`%s`" % n for n in names)
    )
  if getattr(settings, "train_records", None) and not settings.do_train:
    raise InputError("--train_records needs --do_train")


def check_case(do_lower_case, init_checkpoint):
  """The original `validate_case_matches_checkpoint`, as an InputError."""
  try:
    tokenization.validate_case_matches_checkpoint(
      do_lower_case, init_checkpoint
    )
  except ValueError as e:
    raise InputError(str(e).replace("\n", " ")) from e


def train_steps(
  num_examples, train_batch_size, num_train_epochs, warmup_proportion
):
  """`(num_train_steps, num_warmup_steps)` exactly as the original computes.

  `int(num_examples / train_batch_size * num_train_epochs)` and
  `int(num_train_steps * warmup_proportion)`; MRPC (3668 examples, batch 32,
  3 epochs) gives 343 steps and 34 warmup steps.
  """
  num_train_steps = int(num_examples / train_batch_size * num_train_epochs)
  if num_train_steps < 1:
    raise InputError(
      "%d training examples at --train_batch_size=%d for "
      "--num_train_epochs=%s give no training step"
      % (num_examples, train_batch_size, num_train_epochs)
    )
  return num_train_steps, int(num_train_steps * warmup_proportion)


def tf1_init_fn(init_checkpoint):
  """`init_checkpoint_fn` for `Trainer`, or None without a checkpoint.

  The returned `fn(model)` loads every variable of `model.tf1_variables()`
  that the (original TF1 or converted) checkpoint holds, like the original
  `init_from_checkpoint`; heads missing from it keep their initialisers. It
  fails if an encoder (`bert/*`) variable is missing, which means the
  config does not match the checkpoint. The path is checked now, so a typo
  fails before any data is written.
  """
  if not init_checkpoint:
    return None
  prefix = checkpoint_io.resolve_checkpoint(init_checkpoint)

  def init_fn(model):
    report = checkpoint_io.init_from_checkpoint(prefix, model.tf1_variables())
    checkpoint_io.require_encoder_loaded(report, prefix)  # Logged there.

  return init_fn


def freeze_lowest_layers(task, num_layers):
  """Makes `task.build_model()` freeze the encoder's embeddings and lowest
  `num_layers` layers (`--num_frozen_layers`) before the optimizer sees the
  trainable variables."""
  build_model = task.build_model

  def build_frozen_model():
    model = build_model()
    try:
      model.encoder.freeze_lowest_layers(num_layers)
    except ValueError as e:
      raise InputError("--num_frozen_layers=%d: %s" % (num_layers, e)) from e
    return model

  task.build_model = build_frozen_model


def unfreeze_schedule(settings, config=None):
  """`--unfreeze_schedule` parsed (checked against `config`'s layers), or
  None; it excludes `--num_frozen_layers`."""
  # Defined by the fine-tuning scripts only (not run_pretraining).
  text = getattr(settings, "unfreeze_schedule", None)
  if not text:
    return None
  if settings.num_frozen_layers:
    raise InputError(
      "--unfreeze_schedule and --num_frozen_layers: give one "
      "(the schedule's first phase is the frozen start)"
    )
  schedule = unfreezing.UnfreezeSchedule.parse(text)
  if config is not None:
    schedule.check_layers(config.num_hidden_layers)
  return schedule


def build_trainer(settings, task, num_train_steps=0, num_warmup_steps=0):
  """Returns a `Trainer` set up from the flags.

  In order: seeds / op determinism / `--dtype` policy (before any model is
  built), the strategy (`--use_tpu`, TF_CONFIG, `--num_gpus`), the original
  optimizer (`--optimizer`, `--learning_rate`, warmup + linear decay over
  `num_train_steps`), `--init_checkpoint` for fresh runs,
  `--num_frozen_layers` (if defined) and the Trainer's loop/checkpoint
  flags. Checkpoints go to `--output_dir`.

  Args:
    settings: a Job config (`jobs.config`) or parsed flags: the engine
      settings plus
      `learning_rate`, `init_checkpoint` and `output_dir`.
    task: a `bert_tf.tasks.base.Task`; its model must have
      `tf1_variables()` when `--init_checkpoint` is set.
    num_train_steps: total training steps (0 when not training: the
      optimizer is then only built so checkpoints restore).
    num_warmup_steps: linear warmup steps.
  """
  distribution.configure_runtime(**engine_flags.runtime_kwargs(settings))
  strategy = distribution.get_strategy(**engine_flags.strategy_kwargs(settings))

  def optimizer_fn():
    return optimization.create_optimizer(
      settings.learning_rate,
      max(num_train_steps, 1),
      num_warmup_steps,
      optimizer_type=settings.optimizer,
    )

  if getattr(settings, "num_frozen_layers", 0):
    freeze_lowest_layers(task, settings.num_frozen_layers)
  return Trainer(
    task,
    optimizer_fn,
    settings.output_dir,
    strategy,
    unfreeze_schedule=unfreeze_schedule(settings),
    init_checkpoint_fn=tf1_init_fn(settings.init_checkpoint),
    **engine_flags.trainer_kwargs(settings),
  )


def _save_tf1(prefix, model, global_step):
  checkpoint_io.save_tf1_checkpoint(prefix, model.tf1_variables(), global_step)


def eval_hook(
  settings,
  eval_fn,
  config_file,
  steps_per_epoch=None,
  metric_names=None,
  listener=None,
  every_steps=None,
):
  """The `EvalHook` the flags ask for, or None without periodic evaluation.

  Args:
    settings: a Job config or parsed flags: the evaluation settings and
      `output_dir`.
    eval_fn: `fn(trainer)` -> {metric: value}, the task's full dev
      evaluation of the trainer's current weights.
    config_file: the bert_config.json copied into best/.
    steps_per_epoch: training steps per epoch (for --eval_every_epochs).
    metric_names: the names eval_fn returns, to check --best_metric early.
    listener: see `EvalHook`.
    every_steps: the cadence instead of the settings' (the API's epochs).
  """
  steps, epochs = eval_flags.eval_every(settings)
  if epochs is not None:
    steps = max(1, int(steps_per_epoch * epochs))
  steps = every_steps or steps
  if steps is None:
    return None
  return eval_hook_lib.EvalHook(
    eval_fn,
    settings.output_dir,
    steps,
    best_metric=settings.best_metric,
    best_mode=settings.best_mode,
    patience=settings.early_stopping_patience,
    save_fn=_save_tf1,
    config_file=config_file,
    metric_names=metric_names,
    listener=listener,
  )


def restore_predict_checkpoint(settings, trainer):
  """With --predict_checkpoint=best, loads output_dir/best/ into `trainer`
  for its evaluate/predict calls (its step becomes the reported one)."""
  if settings.predict_checkpoint != "best":
    return
  folder = os.path.join(settings.output_dir, run_files.BEST_DIR)
  prefix = os.path.join(folder, run_files.BEST_CHECKPOINT)
  if not tf.io.gfile.exists(prefix + ".index"):
    raise InputError(
      "--predict_checkpoint=best: %s holds no checkpoint "
      "(train with --best_metric)" % folder
    )
  report = checkpoint_io.init_from_checkpoint(
    prefix, trainer.model.tf1_variables()
  )
  if report.not_in_checkpoint:
    raise InputError(
      "%s: no variable %s (a checkpoint of another task?)"
      % (prefix, report.not_in_checkpoint[0])
    )
  step = int(tf.train.load_checkpoint(prefix).get_tensor("global_step"))
  trainer.use_loaded_weights(step)
  logging.info("--predict_checkpoint=best: %s (step %d)", prefix, step)
