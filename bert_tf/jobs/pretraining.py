"""The Job behind run_pretraining.py: pre-training TFRecords (static or dynamic
masks) -> PretrainingTask -> checkpoints and eval_results.txt."""

import os

from absl import logging

from bert_tf.io_utils import InputError
from bert_tf.io_utils import make_output_dir
from bert_tf.io_utils import require_file
from bert_tf.jobs import eval_flags
from bert_tf.modeling.bert_config import BertConfig
from bert_tf.runtime import app
from bert_tf.tasks.result_files import write_eval_results
from data_prep.pretraining.documents import expand_input_files

# Loaded when a job runs (TensorFlow, scikit-learn): --help answers at once.
dynamic_masking = app.lazy_import("bert_tf.tasks.dynamic_masking")

input_pipeline = app.lazy_import("bert_tf.training.input_pipeline")

pretraining = app.lazy_import("bert_tf.tasks.pretraining")

run_config = app.lazy_import("bert_tf.training.run_config")

wiring = app.lazy_import("bert_tf.jobs.wiring")

# The keys of Trainer.evaluate with PretrainingTask (eval_results.txt).
_METRIC_NAMES = (
  "loss",
  "masked_lm_accuracy",
  "masked_lm_loss",
  "next_sentence_accuracy",
  "next_sentence_loss",
)

_REQUIRED = ("input_file", "bert_config_file", "output_dir")


class PretrainingJob:
  """run_pretraining.py's Job: its flags (the FlagValues given) -> the run."""

  def __init__(self, flag_values):
    self.flags = flag_values

  def check_flags(self):
    for name in _REQUIRED:
      if not self.flags[name].value:
        raise InputError("--%s is required" % name)
    if not self.flags.do_train and not self.flags.do_eval:
      raise InputError("At least one of `do_train` or `do_eval` must be True.")
    eval_flags.check_eval_flags(self.flags, training=self.flags.do_train)
    require_file(self.flags.bert_config_file, "bert_config_file")
    if self.flags.dynamic_masking:
      if not self.flags.vocab_file:
        raise InputError("--dynamic_masking needs --vocab_file")
      require_file(self.flags.vocab_file, "vocab_file")
    elif self.flags.do_whole_word_mask:
      raise InputError(
        "--do_whole_word_mask needs --dynamic_masking (static "
        "masks are made by create_pretraining_data)"
      )

  def train_dataset_fn(self, input_files, specs):
    dataset_fn = input_pipeline.training_dataset_fn(
      input_files,
      specs,
      self.flags.train_batch_size,
      interleave_files=True,
      deterministic=self.flags.deterministic,
    )
    if not self.flags.dynamic_masking:
      return dataset_fn
    masking = dynamic_masking.DynamicMasking.from_vocab_file(
      self.flags.vocab_file,
      self.flags.max_predictions_per_seq,
      self.flags.masked_lm_prob,
      whole_word_mask=self.flags.do_whole_word_mask,
    )
    return masking.wrap(dataset_fn)

  def run(self):
    self.check_flags()
    config = BertConfig.from_json_file(self.flags.bert_config_file)
    config.check_max_seq_length(self.flags.max_seq_length)
    config.check_segments(True, "pre-training (next sentence prediction)")
    input_files = expand_input_files(self.flags.input_file)
    task = pretraining.PretrainingTask(
      config, self.flags.max_seq_length, self.flags.max_predictions_per_seq
    )
    specs = task.feature_spec(True)
    for path in input_files:
      input_pipeline.check_first_record(
        path,
        specs,
        "input_file",
        "--max_seq_length / --max_predictions_per_seq must match data "
        "generation",
      )
    logging.info(
      "*** Input Files: %d (%s) ***",
      len(input_files),
      ", ".join(input_files[:5]),
    )

    def evaluate(trainer):
      # As the original: --max_eval_steps batches of --input_file, in order.
      dataset = input_pipeline.eval_dataset(
        input_files,
        specs,
        self.flags.eval_batch_size,
        repeat=True,
        drop_remainder=True,
        max_batches=self.flags.max_eval_steps,
      )
      return trainer.evaluate(dataset, self.flags.eval_batch_size)

    hook = wiring.eval_hook(
      self.flags,
      evaluate,
      self.flags.bert_config_file,
      metric_names=_METRIC_NAMES,
    )
    make_output_dir(self.flags.output_dir)
    run_config.check_or_write(
      self.flags.output_dir,
      run_config.RunConfig(
        "pretraining",
        {"max_predictions_per_seq": self.flags.max_predictions_per_seq},
        # The records are tokenized already: the casing is not known here.
        run_config.tokenizer_settings(self.flags.vocab_file, True, None)
        | {"do_lower_case": None},
        self.flags.max_seq_length,
        config.to_dict(),
      ),
      "use another --output_dir",
    )
    trainer = wiring.build_trainer(
      self.flags, task, self.flags.num_train_steps, self.flags.num_warmup_steps
    )

    if self.flags.do_train:
      logging.info(
        "***** Running training: batch size %d, %d steps *****",
        self.flags.train_batch_size,
        self.flags.num_train_steps,
      )
      trainer.train(
        self.train_dataset_fn(input_files, specs),
        self.flags.num_train_steps,
        eval_hook=hook,
      )

    if self.flags.do_eval:
      logging.info(
        "***** Running evaluation: batch size %d, %d steps *****",
        self.flags.eval_batch_size,
        self.flags.max_eval_steps,
      )
      write_eval_results(
        os.path.join(self.flags.output_dir, "eval_results.txt"),
        evaluate(trainer),
      )
