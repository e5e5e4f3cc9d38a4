"""Classifier featurization on real GLUE rows, expected values derived by hand
from the original `convert_single_example` rules; TFRecord round trip."""

import os

import pytest
import tensorflow as tf

from bert_tf.io_utils import InputError
from bert_tf.tasks import classification as classification_task
from bert_tf.tokenizers import tokenization
from data_prep.classifier import features as cf
from data_prep.classifier import tasks as classifier_tasks
from data_prep.classifier.example import InputExample
from data_prep.classifier.example import PaddingInputExample
from data_prep.common.sequence_pairs import truncate_seq_pair
from tests.conftest import FIXTURES


@pytest.fixture(scope="module")
def tokenizer():
  return tokenization.FullTokenizer(str(FIXTURES / "vocab_uncased.txt"), True)


@pytest.fixture(scope="module")
def vocab():
  with open(FIXTURES / "vocab_uncased.txt", encoding="utf-8") as f:
    return {line.strip(): i for i, line in enumerate(f)}


def _processor(fixtures_dir, task, folder):
  return classifier_tasks.get_processor(
    task, str(fixtures_dir / "glue" / folder)
  )


def _check(features, vocab, tokens_a, tokens_b, max_seq_length, label_id):
  """Asserts the original layout: [CLS] a [SEP] (b [SEP]), zero padding."""
  tokens = ["[CLS]"] + tokens_a + ["[SEP]"]
  segments = [0] * len(tokens)
  if tokens_b:
    tokens += tokens_b + ["[SEP]"]
    segments += [1] * (len(tokens_b) + 1)
  pad = [0] * (max_seq_length - len(tokens))
  assert features.input_ids == [vocab[t] for t in tokens] + pad
  assert features.input_mask == [1] * len(tokens) + pad
  assert features.segment_ids == segments + pad
  assert features.label_id == label_id
  assert features.is_real_example == 1


def test_cola_single_sentence(fixtures_dir, tokenizer, vocab):
  processor = _processor(fixtures_dir, "cola", "CoLA")
  example = processor.get_examples("train")[0]
  tokens = (
    "our friends won ' t buy this analysis , let alone the next one "
    "we propose ."
  ).split()
  _check(
    cf.convert_single_example(example, processor.get_labels(), 128, tokenizer),
    vocab,
    tokens,
    [],
    128,
    1,
  )
  # Singles keep the first max_seq_length - 2 pieces.
  _check(
    cf.convert_single_example(example, processor.get_labels(), 6, tokenizer),
    vocab,
    tokens[:4],
    [],
    6,
    1,
  )


def test_mrpc_pair(fixtures_dir, tokenizer, vocab):
  processor = _processor(fixtures_dir, "mrpc", "MRPC")
  example = processor.get_examples("train")[5]
  assert example.guid == "train-6"
  tail = (
    "the first quarter of the year dropped 15 percent from the same "
    "period a year earlier ."
  ).split()
  tokens_a = ["revenue", "in"] + tail
  tokens_b = (
    "with the scandal hanging over stewart ' s company , revenue"
  ).split() + tail
  _check(
    cf.convert_single_example(example, ["0", "1"], 64, tokenizer),
    vocab,
    tokens_a,
    tokens_b,
    64,
    1,
  )
  dev = processor.get_examples("dev")[0]
  features = cf.convert_single_example(dev, ["0", "1"], 64, tokenizer)
  first_b = features.segment_ids.index(1)
  assert features.input_ids[first_b : first_b + 3] == [
    vocab["\""],
    vocab["the"],
    vocab["foods"],
  ]


def test_sst2_trailing_space_adds_nothing(fixtures_dir, tokenizer, vocab):
  processor = _processor(fixtures_dir, "sst-2", "SST-2")
  example = processor.get_examples("train")[0]
  tokens = "hide new secret ##ions from the parental units".split()
  _check(
    cf.convert_single_example(example, ["0", "1"], 16, tokenizer),
    vocab,
    tokens,
    [],
    16,
    0,
  )


def test_stsb_truncation_tie_pops_b(fixtures_dir, tokenizer, vocab):
  processor = _processor(fixtures_dir, "sts-b", "STS-B")
  example = processor.get_examples("train")[0]
  # a: a plane is taking off . (6)   b: an air plane is taking off . (7)
  # Budget 12 - 3 = 9: b longer -> pop b (6,6); tie -> pop b (6,5);
  # a longer -> pop a (5,5); tie -> pop b (5,4).
  features = cf.convert_single_example(example, None, 12, tokenizer)
  _check(
    features,
    vocab,
    "a plane is taking off".split(),
    "an air plane is".split(),
    12,
    5.0,
  )
  assert isinstance(features.label_id, float)


def test_truncate_seq_pair_rules():
  a, b = [1, 2, 3], [4, 5, 6]
  truncate_seq_pair(a, b, 5)
  assert (a, b) == ([1, 2, 3], [4, 5])
  truncate_seq_pair(a, b, 3)
  assert (a, b) == ([1, 2], [4])


def test_rte_pair_and_long_premise(fixtures_dir, tokenizer, vocab):
  processor = _processor(fixtures_dir, "rte", "RTE")
  dev = processor.get_examples("dev")
  tokens_a = (
    "dana reeve , the widow of the actor christopher reeve , has "
    "died of lung cancer at age 44 , according to the christopher "
    "reeve foundation ."
  ).split()
  tokens_b = "christopher reeve had an accident .".split()
  _check(
    cf.convert_single_example(dev[0], processor.get_labels(), 128, tokenizer),
    vocab,
    tokens_a,
    tokens_b,
    128,
    1,
  )
  # A long premise and an 11-piece hypothesis: only a loses pieces, from
  # its end, down to 128 - 3 - 11 = 114.
  full_a = tokenizer.tokenize(dev[2].text_a)
  tokens_b = (
    "15 million tonnes of rubbish are produced daily in cairo ."
  ).split()
  assert len(full_a) > 114
  _check(
    cf.convert_single_example(dev[2], processor.get_labels(), 128, tokenizer),
    vocab,
    full_a[:114],
    tokens_b,
    128,
    1,
  )


def test_empty_text_b_is_single(tokenizer, vocab):
  example = InputExample("x-0", "Hello.", "", "1")
  _check(
    cf.convert_single_example(example, ["0", "1"], 8, tokenizer),
    vocab,
    ["hello", "."],
    [],
    8,
    1,
  )


def test_padding_example(tokenizer):
  features = cf.convert_single_example(
    PaddingInputExample(), ["0", "1"], 4, tokenizer
  )
  assert features == ([0] * 4, [0] * 4, [0] * 4, 0, 0)


def _read(path, max_seq_length, is_regression):
  spec = classification_task.feature_spec(max_seq_length, is_regression)
  return [
    {
      k: v.numpy().tolist()
      for k, v in tf.io.parse_single_example(record, spec).items()
    }
    for record in tf.data.TFRecordDataset(path)
  ]


def test_tfrecord_round_trip_with_padding(fixtures_dir, tokenizer, tmp_path):
  processor = _processor(fixtures_dir, "mrpc", "MRPC")
  examples = processor.get_examples("train")
  out = str(tmp_path / "train.tf_record")
  count = cf.write_examples_to_tfrecord(
    examples, ["0", "1"], 32, tokenizer, out, pad_to_multiple_of=4
  )
  assert count == 8 and os.listdir(tmp_path) == ["train.tf_record"]
  records = _read(out, 32, False)
  assert len(records) == 8
  for record, example in zip(records, examples):
    features = cf.convert_single_example(example, ["0", "1"], 32, tokenizer)
    assert record == {
      "input_ids": features.input_ids,
      "input_mask": features.input_mask,
      "segment_ids": features.segment_ids,
      "label_ids": features.label_id,
      "is_real_example": 1,
    }
  assert [r["label_ids"] for r in records[:6]] == [1, 0, 1, 0, 1, 1]
  for record in records[6:]:
    assert record["is_real_example"] == 0 and record["label_ids"] == 0
    assert record["input_ids"] == [0] * 32


def test_tfrecord_regression_labels_are_float(
  fixtures_dir, tokenizer, tmp_path
):
  processor = _processor(fixtures_dir, "sts-b", "STS-B")
  out = str(tmp_path / "eval.tf_record")
  cf.write_examples_to_tfrecord(
    processor.get_examples("dev"), None, 16, tokenizer, out
  )
  records = _read(out, 16, True)
  assert [round(r["label_ids"], 4) for r in records] == [5.0, 4.75, 5.0]


def test_failed_write_leaves_no_file(tokenizer, tmp_path):
  out = tmp_path / "train.tf_record"
  bad = [
    InputExample("t-0", "a", None, "0"),
    InputExample("t-1", "b", None, "7"),
  ]
  with pytest.raises(InputError, match="example t-1: unknown label '7'"):
    cf.write_examples_to_tfrecord(bad, ["0", "1"], 8, tokenizer, str(out))
  assert not os.listdir(tmp_path)
  with pytest.raises(InputError, match="--max_seq_length=2"):
    cf.write_examples_to_tfrecord(bad, ["0", "1"], 2, tokenizer, str(out))
