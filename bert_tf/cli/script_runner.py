"""Flags -> strategy, precision, optimizer, init_checkpoint and `Trainer`.

The wiring the original scripts did with `RunConfig` + `TPUEstimator`,
shared by run_classifier.py, run_squad.py and run_pretraining.py. Importing
`define_finetuning_flags` defines the engine flags
(`bert_tf.cli.engine_flags`) and the original flags run_classifier and
run_squad share (run_pretraining defines its own `learning_rate`,
`init_checkpoint`, `output_dir`, ...). A script with other shared flag
modules can list them in --helpshort with `flags.adopt_module_key_flags`.

Example:
    define_finetuning_flags(max_seq_length=128)  # at module level

    # inside an absl `main`:
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

from absl import flags
from absl import logging

from bert_tf.cli import bert_flags
from bert_tf.checkpoints import checkpoint_io
from bert_tf.training import distribution
from bert_tf.cli import engine_flags
from bert_tf.cli import eval_flags
from bert_tf.training import optimization
from bert_tf.tokenizers import tokenization
from bert_tf.io_utils import InputError
from bert_tf.training.trainer import Trainer


def define_finetuning_flags(max_seq_length):
  """Defines the original flags run_classifier and run_squad share (same
  names, help and defaults; `max_seq_length` is 128 / 384 there), and the
  evaluation-during-training flags (`bert_tf.cli.eval_flags`)."""
  engine_flags.define_engine_flags()
  eval_flags.define_eval_flags()
  bert_flags.define_model_flags()
  bert_flags.define_tokenizer_flags()
  bert_flags.define_max_seq_length(max_seq_length)
  bert_flags.define_output_dir()
  flags.DEFINE_bool("do_train", False, "Whether to run training.")
  flags.DEFINE_integer("train_batch_size", 32,
                       "Total batch size for training.")
  flags.DEFINE_float("learning_rate", 5e-5,
                     "The initial learning rate for Adam.")
  flags.DEFINE_float("num_train_epochs", 3.0,
                     "Total number of training epochs to perform.")
  flags.DEFINE_float(
      "warmup_proportion", 0.1,
      "Proportion of training to perform linear learning rate warmup for. "
      "E.g., 0.1 = 10% of training.")
  flags.DEFINE_integer(
      "num_frozen_layers", 0,
      "If > 0, the embeddings and the lowest N transformer layers are not "
      "trained (no gradient, weights stay as loaded).")


def check_do_flags(flag_values, *names):
  """InputError unless at least one of the `--do_*` flags is set (and
  --train_records, where a script has it, comes with --do_train)."""
  if not any(flag_values[n].value for n in names):
    raise InputError("At least one of %s must be True." %
                     ", ".join("`%s`" % n for n in names))
  if ("train_records" in flag_values and flag_values["train_records"].value
      and not flag_values["do_train"].value):
    raise InputError("--train_records needs --do_train")


def check_case(do_lower_case, init_checkpoint):
  """The original `validate_case_matches_checkpoint`, as an InputError."""
  try:
    tokenization.validate_case_matches_checkpoint(do_lower_case,
                                                  init_checkpoint)
  except ValueError as e:
    raise InputError(str(e).replace("\n", " ")) from e


def train_steps(num_examples, train_batch_size, num_train_epochs,
                warmup_proportion):
  """`(num_train_steps, num_warmup_steps)` exactly as the original computes.

  `int(num_examples / train_batch_size * num_train_epochs)` and
  `int(num_train_steps * warmup_proportion)`; MRPC (3668 examples, batch 32,
  3 epochs) gives 343 steps and 34 warmup steps.
  """
  num_train_steps = int(num_examples / train_batch_size * num_train_epochs)
  if num_train_steps < 1:
    raise InputError(
        "%d training examples at --train_batch_size=%d for "
        "--num_train_epochs=%s give no training step" %
        (num_examples, train_batch_size, num_train_epochs))
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
    checkpoint_io.require_encoder_loaded(report, prefix)
    logging.info("init_checkpoint %s: %d variables loaded, %d kept their "
                 "initialisers (%s)", prefix, len(report.loaded),
                 len(report.not_in_checkpoint),
                 ", ".join(report.not_in_checkpoint) or "none")

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


def build_trainer(flag_values, task, num_train_steps=0,
                  num_warmup_steps=0):
  """Returns a `Trainer` set up from the flags.

  In order: seeds / op determinism / `--dtype` policy (before any model is
  built), the strategy (`--use_tpu`, TF_CONFIG, `--num_gpus`), the original
  optimizer (`--optimizer`, `--learning_rate`, warmup + linear decay over
  `num_train_steps`), `--init_checkpoint` for fresh runs,
  `--num_frozen_layers` (if defined) and the Trainer's loop/checkpoint
  flags. Checkpoints go to `--output_dir`.

  Args:
    flag_values: parsed flags (absl FlagValues) with the engine flags plus
      `learning_rate`, `init_checkpoint` and `output_dir`.
    task: a `bert_tf.tasks.base.Task`; its model must have
      `tf1_variables()` when `--init_checkpoint` is set.
    num_train_steps: total training steps (0 when not training: the
      optimizer is then only built so checkpoints restore).
    num_warmup_steps: linear warmup steps.
  """
  distribution.configure_runtime(**engine_flags.runtime_kwargs(flag_values))
  strategy = distribution.get_strategy(
      **engine_flags.strategy_kwargs(flag_values))

  def optimizer_fn():
    return optimization.create_optimizer(
        flag_values.learning_rate, max(num_train_steps, 1), num_warmup_steps,
        optimizer_type=flag_values.optimizer)

  if "num_frozen_layers" in flag_values:
    freeze_lowest_layers(task, flag_values.num_frozen_layers)
  return Trainer(task, optimizer_fn, flag_values.output_dir, strategy,
                 init_checkpoint_fn=tf1_init_fn(flag_values.init_checkpoint),
                 **engine_flags.trainer_kwargs(flag_values))

