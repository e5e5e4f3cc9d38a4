"""The Job behind run_ner.py: CoNLL files -> run_ner's windows -> NerTask ->
tagged files and entity-level results.

Its flags are defined by the script (`define_flags`); the Job reads its
config (below), built from those flags or by the Python API.
"""

import dataclasses
import os
import random

from absl import logging

from bert_tf.io_utils import atomic_output
from bert_tf.io_utils import InputError
from bert_tf.io_utils import output_set
from bert_tf.io_utils import require_file
from bert_tf.jobs import config as job_config
from bert_tf.jobs import finetune
from bert_tf.runtime import app
from bert_tf.tasks.result_files import write_eval_results
from bert_tf.tasks.result_files import write_lines
from data_prep.ner import conll
from data_prep.ner.features import Featurizer
from data_prep.ner.records import write_windows

# Loaded when a job runs (TensorFlow, scikit-learn): --help answers at once.
evaluation = app.lazy_import("data_prep.ner.evaluation")


input_pipeline = app.lazy_import("bert_tf.training.input_pipeline")


ner_task = app.lazy_import("bert_tf.tasks.ner")


# split -> (its file flag, its file names in --data_dir, output prefix)
_FILES = {
  "train": ("train_file", ("train.txt",), None),
  "dev": ("eval_file", ("valid.txt", "dev.txt"), "eval"),
  "test": ("predict_file", ("test.txt",), "test"),
}


def _split_path(flag_values, split, required):
  """The split's file: its --*_file flag, else the data_dir file."""
  file_flag, names, _ = _FILES[split]
  if getattr(flag_values, file_flag):
    require_file(getattr(flag_values, file_flag), file_flag)
    return getattr(flag_values, file_flag)
  if flag_values.data_dir:
    for name in names:
      path = os.path.join(flag_values.data_dir, name)
      if os.path.isfile(path):
        return path
  if required:
    raise InputError(
      "--%s needs --%s or --data_dir with %s"
      % (finetune.SPLITS[split].do_flag, file_flag, " or ".join(names))
    )
  return None


def _read(flag_values, path):
  return conll.read_conll(path, flag_values.tag_scheme)


@dataclasses.dataclass
class NerConfig(job_config.FinetuneConfig):
  """run_ner.py's flags."""

  data_dir: str | None = None
  train_file: str | None = None
  eval_file: str | None = None
  predict_file: str | None = None
  labels: str | None = None
  tag_scheme: str = "iob2"
  feature_mode: str = "fine_tune"
  lstm_units: int = 768
  document_context: bool = False


class NerJob(finetune.Job):
  """CoNLL sentences -> windows -> NerTask -> predictions and
  entity-level results."""

  pairs = (False, "NER")

  def check_flags(self, config):
    ner_task.check_feature_mode(
      self.config.feature_mode, config.num_hidden_layers
    )
    # A feature-based tagger freezes the whole encoder: a freezing flag
    # would be logged and do nothing.
    for name in ("num_frozen_layers", "unfreeze_schedule"):
      if self.config.feature_mode != "fine_tune" and getattr(self.config, name):
        raise InputError(
          "--%s: the encoder is frozen whole with --feature_mode=%s "
          "(only --feature_mode=fine_tune trains it)"
          % (name, self.config.feature_mode)
        )
    if self.config.train_records and not self.config.labels:
      raise InputError(
        "--train_records needs --labels: the label list "
        "data_prep.ner printed for the records"
      )

  def read(self, split):
    return _read(self.config, _split_path(self.config, split, True))

  def _labels(self):
    """--labels, or those of the training file; every split checked."""
    if self.config.labels:
      labels = conll.parse_labels(self.config.labels)
    else:
      train = self.examples.get("train")
      if train is None:
        path = _split_path(self.config, "train", False)
        if path is None:
          raise InputError(
            "--labels is required without a training file "
            "(--train_file or --data_dir with train.txt)"
          )
        train = _read(self.config, path)
      if not conll.is_labelled(train):
        raise InputError("%s: no tags in the training file" % train[0].path)
      labels = conll.label_list(train)
    for split, sentences in self.examples.items():
      if conll.is_labelled(sentences):
        conll.check_tags(sentences, labels)
      elif split != "test":
        raise InputError(
          "%s: no tags; --%s needs a labelled file"
          % (sentences[0].path, finetune.SPLITS[split].do_flag)
        )
    return labels

  def build_task(self, config, tokenizer):
    self.labels = self._labels()
    featurizer = Featurizer(
      tokenizer,
      self.labels,
      self.config.max_seq_length,
      self.config.document_context,
    )
    self.windows = {
      split: featurizer.windows(sentences)
      for split, sentences in self.examples.items()
    }
    for split, windows in self.windows.items():
      logging.info(
        "%s: %d sentences -> %d windows",
        split,
        len(self.examples[split]),
        len(windows),
      )
    return ner_task.NerTask(
      config,
      len(self.labels),
      self.config.max_seq_length,
      self.config.feature_mode,
      self.config.lstm_units,
    )

  def num_train_examples(self):
    return len(self.windows["train"])

  def train_value_limits(self):
    return {"label_ids": len(self.labels)}

  def write_records(self, split, path):
    windows = self.windows[split]
    if split == "train":
      # The file is in document order: shuffle once (the input pipeline
      # only shuffles within 100 records), the same way on every run.
      windows = list(windows)
      random.Random(12345).shuffle(windows)
    write_windows(path, windows, self.config.max_seq_length)

  def train_dataset_fn(self, files):
    if not self.config.train_records:
      return super().train_dataset_fn(files)
    # data_prep.ner writes in document order: interleave the shards and
    # shuffle within 10,000 windows (~10 MB of records) instead of 100.
    return input_pipeline.training_dataset_fn(
      files,
      self.task.feature_spec(True),
      self.config.train_batch_size,
      interleave_files=len(files) > 1,
      shuffle_buffer=10000,
    )

  def run_settings(self):
    head = {"labels": self.labels, "feature_mode": self.config.feature_mode}
    if self.config.feature_mode != "fine_tune":  # the BiLSTM exists only then
      head["lstm_units"] = self.config.lstm_units
    # --document_context is a serving choice for export, not the model's.
    return "ner", head, {}

  def prepare_output_dir(self):
    # For `export_saved_model --task=ner --labels_file`.
    write_lines(
      self.output_path("label_list.txt"),
      (label + "\n" for label in self.labels),
    )

  def _tag(self, trainer, split):
    """(word tags, metrics or None without gold tags) of `split`."""
    return evaluation.tag_results(
      self.windows[split],
      self.predict_rows(trainer, split, ("label_weights",)),
      self.examples[split],
      self.labels,
      _FILES[split][2],
      trainer.global_step,
    )

  def eval_results(self, trainer):
    return self._tag(trainer, "dev")[1]

  def metric_names(self):
    return evaluation.metric_names(self.labels, "eval") + ["eval_loss"]

  def write_outputs(self, trainer):
    for split in ("dev", "test"):
      if getattr(self.config, finetune.SPLITS[split].do_flag):
        self._write_split(trainer, split)

  def _write_split(self, trainer, split):
    tags, results = self._tag(trainer, split)
    prefix = _FILES[split][2]
    # The results describe these predictions: published together.
    with output_set(
      self.config.output_dir,
      [prefix + "_predictions.txt", prefix + "_results.txt"],
    ):
      with atomic_output(self.output_path(prefix + "_predictions.txt")) as f:
        f.writelines(evaluation.prediction_lines(self.examples[split], tags))
      if results is not None:
        write_eval_results(self.output_path(prefix + "_results.txt"), results)
