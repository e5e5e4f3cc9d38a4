"""The flags every fine-tuning script shares: the original
run_classifier.py flags (names, help and defaults), the engine and
evaluation-during-training flags, and ours (`--spm_model_file`,
`--train_records`, freezing, `--overwrite_output_dir`). TensorFlow-free.

Example (a script's `define_flags`):
    finetune_flags.define_flags(max_seq_length=128,
                                records_of="data_prep.classifier")
"""

from absl import flags

from bert_tf.jobs import engine_flags
from bert_tf.jobs import eval_flags
from bert_tf.runtime import bert_flags
from bert_tf.runtime import flag_checks
from bert_tf.runtime import flag_needs


def define_flags(max_seq_length, records_of, splits=("dev", "test")):
  """The original flags the fine-tuning scripts share (names, help and
  defaults as in run_classifier.py; `max_seq_length` is 384 for SQuAD), the
  engine and evaluation-during-training flags, `--spm_model_file`, and
  `--train_records` (records of the data_prep job `records_of`). `splits`:
  which of dev / test get run_classifier's `--do_eval` / `--do_predict` and
  batch-size flags (SQuAD defines its own `--do_predict`)."""
  engine_flags.define_engine_flags()
  eval_flags.define_eval_flags()
  bert_flags.define_model_flags()
  bert_flags.define_tokenizer_flags()
  bert_flags.define_spm_model_file()
  bert_flags.define_max_seq_length(max_seq_length)
  bert_flags.define_output_dir()
  flags.DEFINE_bool("do_train", False, "Whether to run training.")
  if "dev" in splits:
    flags.DEFINE_bool("do_eval", False, "Whether to run eval on the dev set.")
  if "test" in splits:
    flags.DEFINE_bool(
      "do_predict",
      False,
      "Whether to run the model in inference mode on the test set.",
    )
  flags.DEFINE_integer("train_batch_size", 32, "Total batch size for training.")
  flag_checks.positive("train_batch_size")
  if "dev" in splits:
    flags.DEFINE_integer("eval_batch_size", 8, "Total batch size for eval.")
    flag_checks.positive("eval_batch_size")
  if "test" in splits:
    flags.DEFINE_integer(
      "predict_batch_size", 8, "Total batch size for predict."
    )
    flag_checks.positive("predict_batch_size")
  flags.DEFINE_float(
    "learning_rate", 5e-5, "The initial learning rate for Adam."
  )
  flag_checks.non_negative("learning_rate")
  flags.DEFINE_float(
    "num_train_epochs", 3.0, "Total number of training epochs to perform."
  )
  flag_checks.non_negative("num_train_epochs")
  flags.DEFINE_float(
    "warmup_proportion",
    0.1,
    "Proportion of training to perform linear learning rate warmup for. "
    "E.g., 0.1 = 10% of training.",
  )
  flag_checks.in_range("warmup_proportion", 0, 1)
  flags.DEFINE_integer(
    "num_frozen_layers",
    0,
    "If > 0, the embeddings and the lowest N transformer layers are not "
    "trained (no gradient, weights stay as loaded).",
  )
  flag_checks.non_negative("num_frozen_layers")
  flag_needs.requires("num_frozen_layers", "do_train")
  flags.DEFINE_string(
    "unfreeze_schedule",
    None,
    "Gradual unfreezing instead of --num_frozen_layers: STEP:N,... keeps "
    "the embeddings and the lowest N layers frozen from global step STEP, "
    "e.g. 0:12,200:8,400:4,600:0 (newly unfrozen weights start with "
    "fresh optimizer state).",
  )
  flag_needs.requires("unfreeze_schedule", "do_train")
  flags.DEFINE_string(
    "train_records",
    None,
    "With --do_train: train on these TFRecords (comma-separated globs, "
    "e.g. the shards of `python -m %s --runner=...`: "
    "'out/train.tf_record-*') instead of featurizing the training split."
    % records_of,
  )
  flag_needs.requires("train_records", "do_train")
  flags.DEFINE_bool(
    "overwrite_output_dir",
    False,
    "Start over in an --output_dir that holds a run of another model "
    "(other task, labels, model config or lower-casing): its files are "
    "removed. Without it such a run is refused; the same model resumes.",
  )
