"""SQuAD features vs the original's golden output, TFRecords, sidecar."""

import os

import pytest
import tensorflow as tf

from bert_tf.records.task_schemas import squad_schema
from data_prep.squad import records as squad_records
from data_prep.squad.example import split_context
from data_prep.squad.features import doc_spans
from data_prep.squad.features import max_context_flags
from data_prep.squad.postprocess import get_final_text
from data_prep.squad.writer import write_squad_features
from tests.helpers.squad_golden import examples_and_features
from tests.helpers.squad_golden import FEATURE_SETTINGS
from tests.helpers.squad_golden import golden_jsonl
from tests.helpers.squad_golden import VOCAB


def _as_golden(feature, examples):
  record = dict(vars(feature))
  record["qas_id"] = examples[feature.example_index].qas_id
  for key in ("token_to_orig_map", "token_is_max_context"):
    record[key] = {str(k): v for k, v in record[key].items()}
  return record


@pytest.mark.parametrize("setting", sorted(FEATURE_SETTINGS))
def test_features_equal_golden(setting):
  examples, features = examples_and_features(setting)
  golden = golden_jsonl(setting + ".jsonl.gz")
  assert len(features) == len(golden)
  for feature, expected in zip(features, golden):
    assert _as_golden(feature, examples) == expected


def test_golden_counts():
  # Counts stated in the golden README.
  _, train = examples_and_features("features_v1_train_128_64_32")
  assert sum(f.start_position == 0 for f in train) == 916
  _, v2 = examples_and_features("features_v2_train_384_128_64")
  assert sum(f.is_impossible for f in v2) == 337


def test_doc_spans_and_max_context_reference_example():
  # Reference doc: 500 doc tokens, 10-token query at 384/128.
  spans = doc_spans(500, 384 - 10 - 3, 128)
  assert spans == [(0, 371), (128, 371), (256, 244)]
  flags = max_context_flags(spans)
  owner = {
    p: i
    for i, (s, n) in enumerate(spans)
    for p, f in zip(range(s, s + n), flags[i])
    if f
  }
  assert (owner[100], owner[200], owner[300], owner[400]) == (0, 0, 1, 1)
  assert sorted(owner) == list(range(500))


@pytest.mark.parametrize(
  "pred,orig,expected",
  [
    ("steve smith", "Steve Smith's", "Steve Smith"),
    ("1895", "(1895-1943).", "1895"),
    ("cafe", "Caf\u00e9", "Caf\u00e9"),
    ("hello world", "Hello,World", "Hello,World"),
  ],
)
def test_get_final_text_reference(pred, orig, expected):
  assert get_final_text(pred, orig, True) == expected


def _parse(path, seq_length, is_training):
  spec = squad_schema(seq_length, is_training).parse_spec()
  return [
    {
      k: v.numpy().tolist()
      for k, v in tf.io.parse_single_example(r, spec).items()
    }
    for r in tf.data.TFRecordDataset(path)
  ]


@pytest.mark.parametrize(
  "setting,workers",
  [("features_v1_train_128_64_32", 1), ("features_v2_eval_128_64_32", 2)],
)
def test_tfrecord_and_sidecar_round_trip(tmp_path, setting, workers):
  _, is_training, _, seq, stride, query = FEATURE_SETTINGS[setting]
  examples, features = examples_and_features(setting)
  out = str(tmp_path / "f.tf_record")
  side = out + ".features.jsonl"
  counts = write_squad_features(
    examples,
    VOCAB,
    True,
    out,
    side,
    seq,
    stride,
    query,
    is_training,
    num_workers=workers,
  )
  assert counts == (len(examples), len(features))
  parsed = _parse(out, seq, is_training)
  assert len(parsed) == len(features)
  for record, feature in zip(parsed, features):
    assert record["unique_ids"] == feature.unique_id
    assert record["input_ids"] == feature.input_ids
    assert record["input_mask"] == feature.input_mask
    assert record["segment_ids"] == feature.segment_ids
    if is_training:
      assert record["start_positions"] == feature.start_position
      assert record["end_positions"] == feature.end_position
      assert record["is_impossible"] == int(feature.is_impossible)
    else:
      assert "start_positions" not in record
  header, side_features = squad_records.read_features_sidecar(side)
  assert header["max_seq_length"] == seq
  for got, feature in zip(side_features, features):
    assert got.qas_id == examples[feature.example_index].qas_id
    for key in (
      "unique_id",
      "example_index",
      "doc_span_index",
      "tokens",
      "token_to_orig_map",
      "token_is_max_context",
    ):
      assert getattr(got, key) == getattr(feature, key)
  assert sorted(os.listdir(tmp_path)) == [
    "f.tf_record",
    "f.tf_record.features.jsonl",
  ]


def test_schema_encoding_equals_tf_train_example():
  _, features = examples_and_features("features_v2_train_384_128_64")
  feature = features[0]
  encoded = squad_schema(384, True).encode(
    {
      "unique_ids": feature.unique_id,
      "input_ids": feature.input_ids,
      "input_mask": feature.input_mask,
      "segment_ids": feature.segment_ids,
      "start_positions": feature.start_position,
      "end_positions": feature.end_position,
      "is_impossible": int(feature.is_impossible),
    }
  )

  def ints(values):
    return tf.train.Feature(int64_list=tf.train.Int64List(value=values))

  expected = tf.train.Example(
    features=tf.train.Features(
      feature={
        "unique_ids": ints([feature.unique_id]),
        "input_ids": ints(feature.input_ids),
        "input_mask": ints(feature.input_mask),
        "segment_ids": ints(feature.segment_ids),
        "start_positions": ints([feature.start_position]),
        "end_positions": ints([feature.end_position]),
        "is_impossible": ints([int(feature.is_impossible)]),
      }
    )
  )
  assert tf.train.Example.FromString(encoded) == expected


def _original_words(text):
  """The original read_squad_examples' word loop."""
  words = []
  prev_is_whitespace = True
  for c in text:
    if c in (" ", "\t", "\r", "\n") or ord(c) == 0x202F:
      prev_is_whitespace = True
    else:
      if prev_is_whitespace:
        words.append(c)
      else:
        words[-1] += c
      prev_is_whitespace = False
  return words


@pytest.mark.parametrize(
  "text",
  [
    "",
    "  ",
    "Super Bowl 50\twas\r\nan  American game. ",
    "a\x0bb\x0cc\x1cd\x1de\x1ff g",  # str.split() would split these
    "caf\u00e9 na\u00efve\u00a0x\u2003y\u202fz\u3000w",  # non-ASCII spaces
    "\u202f lead and trail \u202f",
  ],
)
def test_context_words_follow_the_original_whitespace_rule(text):
  assert split_context(text) == _original_words(text)
