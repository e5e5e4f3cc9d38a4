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

import collections
import os
import random

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

# pylint: disable=g-import-not-at-top,wrong-import-position
from absl import flags
from absl import logging
import numpy as np
import tensorflow as tf

from bert_tf.cli import bert_flags
from bert_tf.cli import engine_flags
from bert_tf.cli import eval_flags
from bert_tf.cli import script_runner
from bert_tf.io_utils import atomic_output
from bert_tf.io_utils import output_set
from bert_tf.io_utils import InputError
from bert_tf.io_utils import make_output_dir
from bert_tf.io_utils import require_file
from bert_tf.modeling.bert_config import BertConfig
from bert_tf.tasks.base import write_eval_results
from bert_tf.tasks.tagging import check_feature_mode
from bert_tf.tasks.tagging import TaggingTask
from bert_tf.tokenizers.loading import load_tokenizer
from bert_tf.training import input_pipeline
from bert_tf.cli import app
from data_prep.ner import conll
from data_prep.ner import evaluation
from data_prep.ner.features import Featurizer
from data_prep.ner.records import write_windows

FLAGS = flags.FLAGS

flags.DEFINE_string(
    "data_dir", None,
    "Folder with train.txt, valid.txt (or dev.txt) and test.txt.")
flags.DEFINE_string("train_file", None, "Training file (default: data_dir).")
flags.DEFINE_string("eval_file", None, "Dev file for --do_eval.")
flags.DEFINE_string("predict_file", None,
                    "File to tag with --do_predict (tags optional).")
flags.DEFINE_string("tag_scheme", "iob2",
                    "Tags of the files: iob2 or iob1 (converted to iob2).")
flags.DEFINE_string("labels", None,
                    "Comma-separated label list (default: from the training "
                    "file), e.g. O,B-PER,I-PER.")
flags.DEFINE_bool("document_context", False,
                  "Fill each window with the neighbouring sentences of the "
                  "same document, as context without labels.")
flags.DEFINE_string("feature_mode", "fine_tune",
                    "fine_tune, or a frozen-encoder feature mode: embeddings, "
                    "second_to_last, last, weighted_sum_last_four, "
                    "concat_last_four, weighted_sum_all.")
flags.DEFINE_integer("lstm_units", 768,
                     "BiLSTM units per direction in a feature mode.")
flags.DEFINE_bool("do_eval", False, "Whether to run eval on the dev set.")
flags.DEFINE_bool("do_predict", False,
                  "Whether to tag the predict file (test set).")
flags.DEFINE_integer("eval_batch_size", 8, "Total batch size for eval.")
flags.DEFINE_integer("predict_batch_size", 8, "Total batch size for predict.")
flags.DEFINE_string(
    "train_records", None,
    "With --do_train and --labels: train on these TFRecords "
    "(comma-separated globs, e.g. the shards of `python -m data_prep.ner "
    "--runner=...`: 'out/train.tf_record-*') instead of featurizing the "
    "training file; --labels is the list data_prep.ner printed.")
script_runner.define_finetuning_flags(max_seq_length=128)
bert_flags.define_spm_model_file()
for _module in (bert_flags, script_runner, engine_flags):
  flags.adopt_module_key_flags(_module)

_Split = collections.namedtuple(
    "_Split", "do_flag file_flag names record batch_flag prefix")
_SPLITS = {
    "train": _Split("do_train", "train_file", ("train.txt",),
                    "train.tf_record", "train_batch_size", None),
    "eval": _Split("do_eval", "eval_file", ("valid.txt", "dev.txt"),
                   "eval.tf_record", "eval_batch_size", "eval"),
    "predict": _Split("do_predict", "predict_file", ("test.txt",),
                      "predict.tf_record", "predict_batch_size", "test"),
}


def _check_flags():
  """Flags and files; -> BertConfig."""
  for name in ("bert_config_file", "output_dir"):
    if not FLAGS[name].value:
      raise InputError("--%s is required" % name)
  script_runner.check_do_flags(FLAGS, "do_train", "do_eval", "do_predict")
  script_runner.check_case(FLAGS.do_lower_case, FLAGS.init_checkpoint)
  eval_flags.check_eval_flags(FLAGS, training=FLAGS.do_train)
  if not FLAGS.spm_model_file:
    require_file(FLAGS.vocab_file, "vocab_file")
  require_file(FLAGS.bert_config_file, "bert_config_file")
  config = BertConfig.from_json_file(FLAGS.bert_config_file)
  config.check_max_seq_length(FLAGS.max_seq_length)
  check_feature_mode(FLAGS.feature_mode, config.num_hidden_layers)
  for name in ("lstm_units", "train_batch_size", "eval_batch_size",
               "predict_batch_size"):
    if FLAGS[name].value < 1:
      raise InputError("--%s must be >= 1, got %d" % (name, FLAGS[name].value))
  return config


def _wanted(split):
  """Whether this run reads `split` (the dev set also for periodic eval)."""
  if split == "train" and FLAGS.train_records:
    return False
  return FLAGS[_SPLITS[split].do_flag].value or (
      split == "eval" and bool(FLAGS.eval_every_steps or
                               FLAGS.eval_every_epochs))


def _split_path(split, required):
  """The split's file: its --*_file flag, else the data_dir file."""
  spec = _SPLITS[split]
  if FLAGS[spec.file_flag].value:
    require_file(FLAGS[spec.file_flag].value, spec.file_flag)
    return FLAGS[spec.file_flag].value
  if FLAGS.data_dir:
    for name in spec.names:
      path = os.path.join(FLAGS.data_dir, name)
      if os.path.isfile(path):
        return path
  if required:
    raise InputError("--%s needs --%s or --data_dir with %s" %
                     (spec.do_flag, spec.file_flag, " or ".join(spec.names)))
  return None


def _read_splits():
  """({split: Sentences} for the --do_* splits, label list), all checked."""
  read = lambda path: conll.read_conll(path, FLAGS.tag_scheme)
  sentences = {split: read(_split_path(split, True))
               for split in _SPLITS if _wanted(split)}
  if FLAGS.labels:
    labels = conll.parse_labels(FLAGS.labels)
  elif FLAGS.train_records:
    raise InputError("--train_records needs --labels: the label list "
                     "data_prep.ner printed for the records")
  else:
    train = sentences.get("train")
    if train is None:
      path = _split_path("train", False)
      if path is None:
        raise InputError("--labels is required without a training file "
                         "(--train_file or --data_dir with train.txt)")
      train = read(path)
    if not conll.is_labelled(train):
      raise InputError("%s: no tags in the training file" % train[0].path)
    labels = conll.label_list(train)
  for split, split_sentences in sentences.items():
    if conll.is_labelled(split_sentences):
      conll.check_tags(split_sentences, labels)
    elif split != "predict":
      raise InputError("%s: no tags; --%s needs a labelled file" %
                       (split_sentences[0].path, _SPLITS[split].do_flag))
  return sentences, labels


def _write_records(split, windows):
  path = os.path.join(FLAGS.output_dir, _SPLITS[split].record)
  write_windows(path, windows, FLAGS.max_seq_length)
  return path


def _train(trainer, train_files, windows, num_train_steps, hook):
  """Trains on `windows`, or on the record files --train_records gave."""
  spec = trainer.task.feature_spec(True)
  if train_files:
    # data_prep.ner writes in document order: interleave the shards and
    # shuffle within 10,000 windows (~10 MB of records) instead of 100.
    dataset_fn = input_pipeline.training_dataset_fn(
        train_files, spec, FLAGS.train_batch_size,
        interleave_files=len(train_files) > 1, shuffle_buffer=10000)
  else:
    # The file is in document order: shuffle once (the input pipeline only
    # shuffles within 100 records), the same way on every run.
    windows = list(windows)
    random.Random(12345).shuffle(windows)
    dataset_fn = input_pipeline.training_dataset_fn(
        [_write_records("train", windows)], spec, FLAGS.train_batch_size)
  logging.info("***** Running training: %d steps", num_train_steps)
  trainer.train(dataset_fn, num_train_steps, eval_hook=hook)


class _Tagger:
  """Tags a split's sentences with the trainer's current weights."""

  def __init__(self, sentences, windows, labels):
    self.sentences = sentences
    self.windows = windows
    self.labels = labels
    self._records = {}

  def tag(self, trainer, split):
    """(word tags, metrics or None without gold tags) of `split`."""
    if split not in self._records:
      self._records[split] = _write_records(split, self.windows[split])
    batch_size = FLAGS[_SPLITS[split].batch_flag].value
    dataset = input_pipeline.eval_dataset(
        [self._records[split]], trainer.task.feature_spec(False), batch_size)
    rows = list(trainer.predict(dataset, batch_size,
                                feature_keys=("label_weights",)))
    sentences = self.sentences[split]
    tags = evaluation.word_tags(self.windows[split],
                                [r["predictions"] for r in rows], sentences,
                                self.labels)
    if not conll.is_labelled(sentences):
      return tags, None
    prefix = _SPLITS[split].prefix
    results = evaluation.entity_metrics([s.tags for s in sentences], tags,
                                        prefix)
    results[prefix + "_loss"] = (
        np.sum([r["loss_sum"] for r in rows]) /
        max(np.sum([r["label_weights"] for r in rows]), 1.0))
    results["global_step"] = trainer.global_step
    return tags, results

  def eval_results(self, trainer):
    """The metrics of eval_results.txt (the --eval_every_* evaluation)."""
    return self.tag(trainer, "eval")[1]

  def write(self, trainer, split):
    """Writes the split's predictions (and results) files."""
    tags, results = self.tag(trainer, split)
    prefix = _SPLITS[split].prefix
    # The results describe these predictions: published together.
    with output_set(FLAGS.output_dir, [prefix + "_predictions.txt",
                                       prefix + "_results.txt"]):
      with atomic_output(os.path.join(FLAGS.output_dir,
                                      prefix + "_predictions.txt")) as f:
        f.writelines(evaluation.prediction_lines(self.sentences[split], tags))
      if results is not None:
        write_eval_results(
            os.path.join(FLAGS.output_dir, prefix + "_results.txt"), results)


def main(_):
  config = _check_flags()
  sentences, labels = _read_splits()
  tokenizer = load_tokenizer(FLAGS.vocab_file, FLAGS.do_lower_case,
                             FLAGS.spm_model_file)
  config.check_vocab(tokenizer.vocab,
                     FLAGS.spm_model_file or FLAGS.vocab_file)
  featurizer = Featurizer(tokenizer, labels, FLAGS.max_seq_length,
                          FLAGS.document_context)
  windows = {split: featurizer.windows(s) for split, s in sentences.items()}
  for split, split_windows in windows.items():
    logging.info("%s: %d sentences -> %d windows", split,
                 len(sentences[split]), len(split_windows))

  task = TaggingTask(config, len(labels), FLAGS.max_seq_length,
                     FLAGS.feature_mode, FLAGS.lstm_units)
  num_train_steps, num_warmup_steps, steps_per_epoch = 0, 0, None
  train_files = None
  if FLAGS.do_train:
    if FLAGS.train_records:
      train_files, num_train = input_pipeline.train_records(
          FLAGS.train_records, task.feature_spec(True),
          {"label_ids": len(labels)})
    else:
      num_train = len(windows["train"])
    steps_per_epoch = num_train / FLAGS.train_batch_size
    num_train_steps, num_warmup_steps = script_runner.train_steps(
        num_train, FLAGS.train_batch_size, FLAGS.num_train_epochs,
        FLAGS.warmup_proportion)
  trainer = script_runner.build_trainer(FLAGS, task, num_train_steps,
                                        num_warmup_steps)
  tagger = _Tagger(sentences, windows, labels)
  # Before any output, so that a bad --best_metric leaves nothing behind.
  hook = eval_flags.eval_hook(
      FLAGS, tagger.eval_results, FLAGS.bert_config_file, steps_per_epoch,
      evaluation.metric_names(labels, "eval") + ["eval_loss"])
  make_output_dir(FLAGS.output_dir)  # after the last flag check
  with atomic_output(os.path.join(FLAGS.output_dir, "label_list.txt")) as f:
    f.writelines(label + "\n" for label in labels)
  if FLAGS.do_train:
    _train(trainer, train_files, windows.get("train"), num_train_steps,
           hook)
  if FLAGS.do_eval or FLAGS.do_predict:
    eval_flags.restore_predict_checkpoint(FLAGS, trainer)
  for split in ("eval", "predict"):
    if FLAGS[_SPLITS[split].do_flag].value:
      tagger.write(trainer, split)


def run():
  """Console-script entry point (flags are defined at import)."""
  app.run_app(main)


if __name__ == "__main__":
  run()
