r"""BERT for named-entity recognition on CoNLL-format files (CoNLL-2003).

Fine-tuned or feature-based, as in the BERT paper (§5.3): WordPiece each
word, label its first piece, predict every word from its first piece.

    python run_ner.py --data_dir=$CONLL_DIR --do_train --do_eval \
      --do_predict --vocab_file=$BERT_DIR/vocab.txt \
      --bert_config_file=$BERT_DIR/bert_config.json \
      --init_checkpoint=$BERT_DIR/bert_model.ckpt --do_lower_case=False \
      --max_seq_length=128 --train_batch_size=32 --learning_rate=5e-5 \
      --num_train_epochs=3.0 --document_context --output_dir=/tmp/ner/

--data_dir reads train.txt, valid.txt (or dev.txt) and test.txt; --train_file
/ --eval_file / --predict_file name other files. Columns: word first, tag
last (`token POS chunk tag` or `token tag`), blank line between sentences,
`-DOCSTART-` lines between documents; a predict file may hold words only.
--tag_scheme=iob1 converts IOB1 tags to IOB2. The labels are `O` plus `B-X`
/ `I-X` for every entity type X of the training file (or --labels). Long
sentences become overlapping windows (each word predicted once, where it has
most context); --document_context fills each window with the neighbouring
sentences of the document as unlabelled context.

--feature_mode=fine_tune (default) trains everything; embeddings,
second_to_last, last, weighted_sum_last_four, concat_last_four or
weighted_sum_all freeze the encoder and train a two-layer BiLSTM
(--lstm_units per direction) and the classifier on those layers.
--num_frozen_layers=N freezes the embeddings and the lowest N layers.
--train_records trains on the records of `python -m data_prep.ner` (e.g.
Beam shards) with --labels as that command printed them.

Writes train/eval/predict.tf_record, checkpoints (re-running resumes),
eval_results.txt (eval_precision, eval_recall, eval_f1 and per entity type
eval_f1_PER ..., entity level as conlleval; eval_loss; global_step),
label_list.txt (the labels in label-id order, one a line, for
`python -m bert_tf.export_saved_model --task=ner --labels_file`),
eval_predictions.txt and test_predictions.txt (`word gold predicted` per
input word in input order, gold in IOB2, a blank line after each sentence,
no -DOCSTART- lines; `word predicted` for a file without tags) and, if the
predict file has tags, test_results.txt (the same keys with test_).
"""

import os
import random

from absl import flags
from absl import logging
import numpy as np

from bert_tf.io_utils import atomic_output
from bert_tf.io_utils import InputError
from bert_tf.io_utils import output_set
from bert_tf.io_utils import require_file
from bert_tf.jobs import finetune
from bert_tf.runtime import app
from bert_tf.runtime import flag_checks
from bert_tf.tasks.result_files import write_eval_results
from bert_tf.tasks.result_files import write_lines
from data_prep.ner import conll
from data_prep.ner.features import Featurizer
from data_prep.ner.records import write_windows

FLAGS = flags.FLAGS
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


def define_flags():
  """run_classifier.py's flags plus the CoNLL files and feature modes."""
  flags.DEFINE_string(
    "data_dir",
    None,
    "Folder with train.txt, valid.txt (or dev.txt) and test.txt.",
  )
  flags.DEFINE_string("train_file", None, "Training file (default: data_dir).")
  flags.DEFINE_string("eval_file", None, "Dev file for --do_eval.")
  flags.DEFINE_string(
    "predict_file", None, "File to tag with --do_predict (tags optional)."
  )
  flags.DEFINE_string(
    "tag_scheme", "iob2", "Tags of the files: iob2 or iob1 (converted to iob2)."
  )
  flags.DEFINE_string(
    "labels",
    None,
    "Comma-separated label list (default: from the "
    "training file), e.g. O,B-PER,I-PER. Needed with "
    "--train_records: the list data_prep.ner printed.",
  )
  flags.DEFINE_bool(
    "document_context",
    False,
    "Fill each window with the neighbouring sentences of the "
    "same document, as context without labels.",
  )
  flags.DEFINE_string(
    "feature_mode",
    "fine_tune",
    "fine_tune, or a frozen-encoder feature mode: "
    "embeddings, second_to_last, last, "
    "weighted_sum_last_four, concat_last_four, "
    "weighted_sum_all.",
  )
  flags.DEFINE_integer(
    "lstm_units", 768, "BiLSTM units per direction in a feature mode."
  )
  flag_checks.positive("lstm_units")
  finetune.define_flags(max_seq_length=128, records_of="data_prep.ner")


def _split_path(split, required):
  """The split's file: its --*_file flag, else the data_dir file."""
  file_flag, names, _ = _FILES[split]
  if FLAGS[file_flag].value:
    require_file(FLAGS[file_flag].value, file_flag)
    return FLAGS[file_flag].value
  if FLAGS.data_dir:
    for name in names:
      path = os.path.join(FLAGS.data_dir, name)
      if os.path.isfile(path):
        return path
  if required:
    raise InputError(
      "--%s needs --%s or --data_dir with %s"
      % (finetune.SPLITS[split].do_flag, file_flag, " or ".join(names))
    )
  return None


def _read(path):
  return conll.read_conll(path, FLAGS.tag_scheme)


class TaggingJob(finetune.Job):
  """CoNLL sentences -> windows -> TaggingTask -> predictions and
  entity-level results."""

  pairs = (False, "NER")

  def check_flags(self, config):
    tagging.check_feature_mode(FLAGS.feature_mode, config.num_hidden_layers)
    if FLAGS.train_records and not FLAGS.labels:
      raise InputError(
        "--train_records needs --labels: the label list "
        "data_prep.ner printed for the records"
      )

  def read(self, split):
    return _read(_split_path(split, True))

  def _labels(self):
    """--labels, or those of the training file; every split checked."""
    if FLAGS.labels:
      labels = conll.parse_labels(FLAGS.labels)
    else:
      train = self.examples.get("train")
      if train is None:
        path = _split_path("train", False)
        if path is None:
          raise InputError(
            "--labels is required without a training file "
            "(--train_file or --data_dir with train.txt)"
          )
        train = _read(path)
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
      tokenizer, self.labels, FLAGS.max_seq_length, FLAGS.document_context
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
      FLAGS.max_seq_length,
      FLAGS.feature_mode,
      FLAGS.lstm_units,
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
    write_windows(path, windows, FLAGS.max_seq_length)

  def train_dataset_fn(self, files):
    if not FLAGS.train_records:
      return super().train_dataset_fn(files)
    # data_prep.ner writes in document order: interleave the shards and
    # shuffle within 10,000 windows (~10 MB of records) instead of 100.
    return input_pipeline.training_dataset_fn(
      files,
      self.task.feature_spec(True),
      FLAGS.train_batch_size,
      interleave_files=len(files) > 1,
      shuffle_buffer=10000,
    )

  def run_settings(self):
    head = {"labels": self.labels, "feature_mode": FLAGS.feature_mode}
    if FLAGS.feature_mode != "fine_tune":  # the BiLSTM exists only then
      head["lstm_units"] = FLAGS.lstm_units
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
    rows = self.predict_rows(trainer, split, ("label_weights",))
    sentences = self.examples[split]
    tags = evaluation.word_tags(
      self.windows[split],
      [r["predictions"] for r in rows],
      sentences,
      self.labels,
    )
    if not conll.is_labelled(sentences):
      return tags, None
    prefix = _FILES[split][2]
    results = evaluation.entity_metrics(
      [s.tags for s in sentences], tags, prefix
    )
    results[prefix + "_loss"] = np.sum([r["loss_sum"] for r in rows]) / max(
      np.sum([r["label_weights"] for r in rows]), 1.0
    )
    results["global_step"] = trainer.global_step
    return tags, results

  def eval_results(self, trainer):
    return self._tag(trainer, "dev")[1]

  def metric_names(self):
    return evaluation.metric_names(self.labels, "eval") + ["eval_loss"]

  def write_outputs(self, trainer):
    for split in ("dev", "test"):
      if FLAGS[finetune.SPLITS[split].do_flag].value:
        self._write_split(trainer, split)

  def _write_split(self, trainer, split):
    tags, results = self._tag(trainer, split)
    prefix = _FILES[split][2]
    # The results describe these predictions: published together.
    with output_set(
      FLAGS.output_dir, [prefix + "_predictions.txt", prefix + "_results.txt"]
    ):
      with atomic_output(self.output_path(prefix + "_predictions.txt")) as f:
        f.writelines(evaluation.prediction_lines(self.examples[split], tags))
      if results is not None:
        write_eval_results(self.output_path(prefix + "_results.txt"), results)


def main(_):
  finetune.run(TaggingJob(FLAGS))


def run():
  """Console-script entry point."""
  define_flags()
  app.run_app(main)


if __name__ == "__main__":
  run()
