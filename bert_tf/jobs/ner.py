"""The Job behind run_ner.py: CoNLL files -> run_ner's windows -> TaggingTask ->
tagged files and entity-level results.

Its flags are defined by the script (`define_flags`); the Job reads them
from the FlagValues it is given.
"""

import os
import random

from absl import logging

from bert_tf.io_utils import atomic_output
from bert_tf.io_utils import InputError
from bert_tf.io_utils import output_set
from bert_tf.io_utils import require_file
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


tagging = app.lazy_import("bert_tf.tasks.tagging")


# split -> (its file flag, its file names in --data_dir, output prefix)
_FILES = {
  "train": ("train_file", ("train.txt",), None),
  "dev": ("eval_file", ("valid.txt", "dev.txt"), "eval"),
  "test": ("predict_file", ("test.txt",), "test"),
}


def _split_path(flag_values, split, required):
  """The split's file: its --*_file flag, else the data_dir file."""
  file_flag, names, _ = _FILES[split]
  if flag_values[file_flag].value:
    require_file(flag_values[file_flag].value, file_flag)
    return flag_values[file_flag].value
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


class TaggingJob(finetune.Job):
  """CoNLL sentences -> windows -> TaggingTask -> predictions and
  entity-level results."""

  pairs = (False, "NER")

  def check_flags(self, config):
    tagging.check_feature_mode(
      self.flags.feature_mode, config.num_hidden_layers
    )
    if self.flags.train_records and not self.flags.labels:
      raise InputError(
        "--train_records needs --labels: the label list "
        "data_prep.ner printed for the records"
      )

  def read(self, split):
    return _read(self.flags, _split_path(self.flags, split, True))

  def _labels(self):
    """--labels, or those of the training file; every split checked."""
    if self.flags.labels:
      labels = conll.parse_labels(self.flags.labels)
    else:
      train = self.examples.get("train")
      if train is None:
        path = _split_path(self.flags, "train", False)
        if path is None:
          raise InputError(
            "--labels is required without a training file "
            "(--train_file or --data_dir with train.txt)"
          )
        train = _read(self.flags, path)
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
      self.flags.max_seq_length,
      self.flags.document_context,
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
    return tagging.TaggingTask(
      config,
      len(self.labels),
      self.flags.max_seq_length,
      self.flags.feature_mode,
      self.flags.lstm_units,
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
    write_windows(path, windows, self.flags.max_seq_length)

  def train_dataset_fn(self, files):
    if not self.flags.train_records:
      return super().train_dataset_fn(files)
    # data_prep.ner writes in document order: interleave the shards and
    # shuffle within 10,000 windows (~10 MB of records) instead of 100.
    return input_pipeline.training_dataset_fn(
      files,
      self.task.feature_spec(True),
      self.flags.train_batch_size,
      interleave_files=len(files) > 1,
      shuffle_buffer=10000,
    )

  def run_settings(self):
    head = {"labels": self.labels, "feature_mode": self.flags.feature_mode}
    if self.flags.feature_mode != "fine_tune":  # the BiLSTM exists only then
      head["lstm_units"] = self.flags.lstm_units
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
      if self.flags[finetune.SPLITS[split].do_flag].value:
        self._write_split(trainer, split)

  def _write_split(self, trainer, split):
    tags, results = self._tag(trainer, split)
    prefix = _FILES[split][2]
    # The results describe these predictions: published together.
    with output_set(
      self.flags.output_dir,
      [prefix + "_predictions.txt", prefix + "_results.txt"],
    ):
      with atomic_output(self.output_path(prefix + "_predictions.txt")) as f:
        f.writelines(evaluation.prediction_lines(self.examples[split], tags))
      if results is not None:
        write_eval_results(self.output_path(prefix + "_results.txt"), results)
