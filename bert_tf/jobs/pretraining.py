"""The Job behind run_pretraining.py: pre-training TFRecords (static or dynamic
masks) -> PretrainingTask -> checkpoints and eval_results.txt."""

import dataclasses
import os

from absl import logging

from bert_tf.io_utils import InputError
from bert_tf.io_utils import make_output_dir
from bert_tf.io_utils import require_file
from bert_tf.jobs import config as job_config
from bert_tf.jobs import eval_flags
from bert_tf.modeling.bert_config import BertConfig
from bert_tf.runtime import app
from bert_tf.tasks.result_files import write_eval_results
from bert_tf.tokenizers import tokenization
from data_prep.pretraining.documents import expand_input_files

# Loaded when a job runs (TensorFlow, scikit-learn): --help answers at once.
dynamic_masking = app.lazy_import("bert_tf.tasks.dynamic_masking")

input_pipeline = app.lazy_import("bert_tf.training.input_pipeline")

pretraining = app.lazy_import("bert_tf.tasks.pretraining")

run_config = app.lazy_import("bert_tf.runs.run_config")

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


@dataclasses.dataclass
class PretrainingConfig(job_config.EngineConfig):
  """run_pretraining.py's flags."""

  input_file: str | None = None
  max_predictions_per_seq: int = 20
  num_train_steps: int = 100000
  num_warmup_steps: int = 10000
  max_eval_steps: int = 100
  dynamic_masking: bool = False
  do_whole_word_mask: bool = False
  masked_lm_prob: float = 0.15


class PretrainingJob:
  """run_pretraining.py's Job: its flags (the FlagValues given) -> the run."""

  def __init__(self, config):
    self.config = config

  def check_flags(self):
    for name in _REQUIRED:
      if not getattr(self.config, name):
        raise InputError("--%s is required" % name)
    if not self.config.do_train and not self.config.do_eval:
      raise InputError("At least one of `do_train` or `do_eval` must be True.")
    eval_flags.check_eval_flags(self.config, training=self.config.do_train)
    require_file(self.config.bert_config_file, "bert_config_file")
    if self.config.dynamic_masking:
      if not self.config.vocab_file:
        raise InputError("--dynamic_masking needs --vocab_file")
      require_file(self.config.vocab_file, "vocab_file")
    elif self.config.do_whole_word_mask:
      raise InputError(
        "--do_whole_word_mask needs --dynamic_masking (static "
        "masks are made by create_pretraining_data)"
      )

  def masking(self):
    """The DynamicMasking of --dynamic_masking, or None."""
    if not self.config.dynamic_masking:
      return None
    return dynamic_masking.DynamicMasking.from_vocab_file(
      self.config.vocab_file,
      self.config.max_predictions_per_seq,
      self.config.masked_lm_prob,
      whole_word_mask=self.config.do_whole_word_mask,
    )

  def train_dataset_fn(self, input_files, specs, masking):
    dataset_fn = input_pipeline.training_dataset_fn(
      input_files,
      specs,
      self.config.train_batch_size,
      interleave_files=True,
      deterministic=self.config.deterministic,
    )
    return masking.wrap(dataset_fn) if masking else dataset_fn

  def run(self):
    self.check_flags()
    config = BertConfig.from_json_file(self.config.bert_config_file)
    config.check_max_seq_length(self.config.max_seq_length)
    config.check_segments(True, "pre-training (next sentence prediction)")
    if self.config.dynamic_masking:  # random replacements are vocab ids
      config.check_vocab(
        tokenization.load_vocab(self.config.vocab_file),
        "--vocab_file=%s" % self.config.vocab_file,
      )
    input_files = expand_input_files(self.config.input_file)
    task = pretraining.PretrainingTask(
      config, self.config.max_seq_length, self.config.max_predictions_per_seq
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
        self.config.eval_batch_size,
        repeat=True,
        drop_remainder=True,
        max_batches=self.config.max_eval_steps,
      )
      return trainer.evaluate(dataset, self.config.eval_batch_size)

    hook = wiring.eval_hook(
      self.config,
      evaluate,
      self.config.bert_config_file,
      metric_names=_METRIC_NAMES,
    )
    make_output_dir(self.config.output_dir)
    run_config.check_or_write(
      self.config.output_dir,
      run_config.RunConfig(
        "pretraining",
        {"max_predictions_per_seq": self.config.max_predictions_per_seq},
        # The records are tokenized already: the casing is not known here.
        run_config.tokenizer_settings(self.config.vocab_file, True, None)
        | {"do_lower_case": None},
        self.config.max_seq_length,
        config.to_dict(),
      ),
      "use another --output_dir",
    )
    trainer = wiring.build_trainer(
      self.config,
      task,
      self.config.num_train_steps,
      self.config.num_warmup_steps,
    )

    if self.config.do_train:
      logging.info(
        "***** Running training: batch size %d, %d steps *****",
        self.config.train_batch_size,
        self.config.num_train_steps,
      )
      masking = self.masking()
      try:
        trainer.train(
          self.train_dataset_fn(input_files, specs, masking),
          self.config.num_train_steps,
          eval_hook=hook,
        )
      except Exception as e:  # pylint: disable=broad-except
        # A record the masking cannot use: named by file, index and field.
        refused = masking and input_pipeline.refused_record(
          e, input_files, specs, masking.record_check, "input_file"
        )
        if not refused:
          raise
        raise refused from None

    if self.config.do_eval:
      logging.info(
        "***** Running evaluation: batch size %d, %d steps *****",
        self.config.eval_batch_size,
        self.config.max_eval_steps,
      )
      write_eval_results(
        os.path.join(self.config.output_dir, "eval_results.txt"),
        evaluate(trainer),
      )
