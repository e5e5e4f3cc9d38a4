"""--task_name=tsv --multi_label: label sets read from a cell, written as a
0/1 vector (label_ids, int64 list); one-line errors for bad cells."""

import pytest
import tensorflow as tf

from bert_tf.io_utils import InputError
from bert_tf.tasks.classification import ClassificationTask
from bert_tf.tokenizers import tokenization
from data_prep.classifier import features as cf
from data_prep.classifier import tasks as classifier_tasks
from tests.conftest import FIXTURES

LABELS = ["LOC", "MISC", "ORG", "PER"]


def _processor(folder, **options):
  options = dict(
    dict(text_a_column=1, label_column=0, labels=LABELS, multi_label=True),
    **options,
  )
  return classifier_tasks.get_processor("tsv", str(folder), **options)


def _write(folder, split, text):
  (folder / (split + ".tsv")).write_text(text, encoding="utf-8")


def test_label_sets_and_vectors(tmp_path):
  _write(
    tmp_path,
    "train",
    "PER,LOC\tJohn lives in Paris .\n"
    "\tNothing here .\n ORG , PER ,PER\tSmith joined Acme .\n",
  )
  _write(tmp_path, "test", "x\tParis again .\n")
  processor = _processor(tmp_path)
  assert processor.is_multi_label and not processor.is_regression
  train = processor.get_examples("train")
  # Label order, whitespace and duplicates do not matter; empty is allowed.
  assert [e.label for e in train] == [("LOC", "PER"), (), ("ORG", "PER")]
  assert processor.get_examples("test")[0].label == ()  # not read
  tokenizer = tokenization.FullTokenizer(str(FIXTURES / "vocab_uncased.txt"))
  vectors = [
    cf.convert_single_example(
      e, LABELS, 16, tokenizer, multi_label=True
    ).label_id
    for e in train
  ]
  assert vectors == [[1, 0, 0, 1], [0, 0, 0, 0], [0, 0, 1, 1]]
  path = str(tmp_path / "train.tf_record")
  assert (
    cf.write_examples_to_tfrecord(
      train, LABELS, 16, tokenizer, path, pad_to_multiple_of=4, multi_label=True
    )
    == 4
  )
  spec = ClassificationTask(None, 4, 16, multi_label=True).feature_spec(True)
  records = [
    tf.io.parse_single_example(r, spec) for r in tf.data.TFRecordDataset(path)
  ]
  assert [r["label_ids"].numpy().tolist() for r in records] == vectors + [
    [0, 0, 0, 0]
  ]  # the padding example
  assert [int(r["is_real_example"]) for r in records] == [1, 1, 1, 0]


def test_other_separator(tmp_path):
  _write(tmp_path, "dev", "PER|MISC\tA .\n")
  processor = _processor(tmp_path, multi_label_separator="|")
  assert processor.get_examples("dev")[0].label == ("MISC", "PER")


def test_bad_cells_and_options_are_one_line(tmp_path):
  _write(tmp_path, "train", "PER\tOk .\nPER,DATE,TIME\tNo .\n")
  with pytest.raises(
    InputError,
    match=r"train.tsv:2: unknown label 'DATE' "
    r"\(labels: LOC, MISC, ORG, PER\)",
  ):
    _processor(tmp_path).get_examples("train")
  with pytest.raises(InputError, match="--multi_label needs --labels"):
    _processor(tmp_path, labels=None, regression=True)
  with pytest.raises(InputError, match="a label contains the separator"):
    _processor(tmp_path, labels=["A,B", "C"])
