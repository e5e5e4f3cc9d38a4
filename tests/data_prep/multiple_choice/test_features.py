"""Multiple-choice features derived by hand from the paper's layout
`[CLS] context [SEP] prefix ending [SEP]` and run_classifier's pair
truncation; records read back with TensorFlow; no TensorFlow import."""

import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.records.task_schemas import multiple_choice_schema
from bert_tf.tokenizers import tokenization
from bert_tf.training import input_pipeline
from data_prep.multiple_choice.examples import MultipleChoiceExample
from data_prep.multiple_choice.features import convert_example
from data_prep.multiple_choice.features import write_records
from tests.conftest import FIXTURES
from tests.conftest import REPO

EXAMPLE = MultipleChoiceExample(
  "train-0",
  "The man opens the door.",
  "He",
  ["walks in.", "runs away, fast."],
  1,
)


@pytest.fixture(scope="module")
def tokenizer():
  return tokenization.FullTokenizer(str(FIXTURES / "vocab_uncased.txt"), True)


@pytest.fixture(scope="module")
def vocab():
  with open(FIXTURES / "vocab_uncased.txt", encoding="utf-8") as f:
    return {line.strip(): i for i, line in enumerate(f)}


def _choice(vocab, tokens_a, tokens_b, max_seq_length):
  tokens = (
    ["[CLS]"] + tokens_a.split() + ["[SEP]"] + tokens_b.split() + ["[SEP]"]
  )
  segments = [0] * (len(tokens_a.split()) + 2) + [1] * (
    len(tokens_b.split()) + 1
  )
  pad = [0] * (max_seq_length - len(tokens))
  return (
    [vocab[t] for t in tokens] + pad,
    [1] * len(tokens) + pad,
    segments + pad,
  )


def test_one_example_by_hand(tokenizer, vocab):
  features = convert_example(EXAMPLE, 16, tokenizer)
  expected = [
    _choice(vocab, "the man opens the door .", "he walks in .", 16),
    _choice(vocab, "the man opens the door .", "he runs away , fast .", 16),
  ]
  assert features.input_ids == [ids for ids, _, _ in expected]
  assert features.input_mask == [mask for _, mask, _ in expected]
  assert features.segment_ids == [seg for _, _, seg in expected]
  assert (features.label_id, features.is_real_example) == (1, 1)


def test_pair_truncation_per_choice(tokenizer, vocab):
  # 5 pieces fit; the longer side loses its last piece, b on a tie.
  # Choice 0: 6+4 -> 5+4 -> 4+4 -> 4+3 -> 3+3 -> 3+2. Choice 1 starts from
  # the whole context again: 6+6 -> 6+5 -> 5+5 -> ... -> 3+3 -> 3+2.
  features = convert_example(EXAMPLE, 8, tokenizer)
  assert features.input_ids == [
    _choice(vocab, "the man opens", "he walks", 8)[0],
    _choice(vocab, "the man opens", "he runs", 8)[0],
  ]
  assert features.segment_ids[0] == [0] * 5 + [1] * 3


def test_records_round_trip_with_padding(tmp_path, tokenizer):
  path = str(tmp_path / "train.tf_record")
  assert (
    write_records([EXAMPLE], 16, tokenizer, path, pad_to_multiple_of=3) == 3
  )
  batch = next(
    iter(
      input_pipeline.eval_dataset(
        [path], multiple_choice_schema(2, 16).parse_spec(), 10
      )
    )
  )
  features = convert_example(EXAMPLE, 16, tokenizer)
  for key in ("input_ids", "input_mask", "segment_ids"):
    assert batch[key].shape == (3, 2, 16)
    np.testing.assert_array_equal(batch[key][0], getattr(features, key))
    np.testing.assert_array_equal(batch[key][1:], 0)
  np.testing.assert_array_equal(batch["label_ids"], [1, 0, 0])
  np.testing.assert_array_equal(batch["is_real_example"], [1, 0, 0])
  # The bytes are a valid tf.train.Example with flat int64 lists.
  record = next(iter(tf.data.TFRecordDataset(path))).numpy()
  flat = tf.train.Example.FromString(record).features.feature
  assert list(flat["input_ids"].int64_list.value) == sum(features.input_ids, [])


@pytest.mark.process
def test_featurization_is_tensorflow_free():
  code = (
    "import sys; import data_prep.multiple_choice.examples, "
    "data_prep.multiple_choice.features; "
    "print('tensorflow' in sys.modules)"
  )
  result = subprocess.run(
    [sys.executable, "-c", code],
    cwd=REPO,
    capture_output=True,
    text=True,
    timeout=60,
    check=True,
  )
  assert result.stdout.strip() == "False"
