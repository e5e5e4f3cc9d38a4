"""Schemas encode what TensorFlow's own protos serialize, parse back with
their own specs, and reject records of the wrong shape; the one TFRecord
writer's files read back with tf.data."""

import pytest
import tensorflow as tf

from bert_tf.records import example_bytes as eb
from bert_tf.records import task_schemas
from bert_tf.records.schema import Field
from bert_tf.records.schema import FLOAT32
from bert_tf.records.schema import INT64
from bert_tf.records.schema import Schema
from bert_tf.records.tfrecord_file import tfrecord_writer

SCHEMA = Schema(
  [
    Field("ids", INT64, 4),
    Field("id", INT64),
    Field("weights", FLOAT32, 2),
    Field("score", FLOAT32),
  ]
)
VALUES = {
  "ids": [101, 300, -5, 2**40],
  "id": 7,
  "weights": [0.5, 1.0],
  "score": 2.5,
}


def _ints(values):
  return tf.train.Feature(int64_list=tf.train.Int64List(value=values))


def _floats(values):
  return tf.train.Feature(float_list=tf.train.FloatList(value=values))


def test_encode_equals_tf_train_example():
  expected = tf.train.Example(
    features=tf.train.Features(
      feature={
        "ids": _ints([101, 300, -5, 2**40]),
        "id": _ints([7]),
        "weights": _floats([0.5, 1.0]),
        "score": _floats([2.5]),
      }
    )
  )
  assert tf.train.Example.FromString(SCHEMA.encode(VALUES)) == expected


def test_packed_bytes_equal_values_and_parse_back():
  packed = dict(
    VALUES,
    ids=eb.packed_int64(VALUES["ids"]),
    weights=eb.pack_float32(VALUES["weights"]),
  )
  record = SCHEMA.encode(packed)
  assert record == SCHEMA.encode(VALUES)
  parsed = tf.io.parse_single_example(record, SCHEMA.parse_spec())
  assert {k: v.numpy().tolist() for k, v in parsed.items()} == VALUES
  assert eb.unpack_int64(packed["ids"]) == VALUES["ids"]


def test_parts_join_into_one_record():
  head = SCHEMA.entries({"id": 7})
  rest = SCHEMA.entries({k: v for k, v in VALUES.items() if k != "id"})
  assert tf.train.Example.FromString(eb.example_bytes([head, rest])) == (
    tf.train.Example.FromString(SCHEMA.encode(VALUES))
  )


@pytest.mark.parametrize(
  "values,message",
  [
    (dict(VALUES, ids=[1, 2, 3]), "field ids: 3 values, the schema says 4"),
    (dict(VALUES, ids=bytes([1, 2, 0x80, 1])), "field ids: 3 values"),
    (dict(VALUES, weights=[1.0]), "field weights: 1 values"),
    ({"ids": [1, 2, 3, 4]}, "missing ['id', 'weights', 'score']"),
    (dict(VALUES, other=1), "unknown ['other']"),
  ],
)
def test_wrong_records_are_rejected(values, message):
  with pytest.raises(ValueError, match=message.replace("[", r"\[")):
    SCHEMA.encode(values)


def test_scalar_int64_rejects_floats():
  with pytest.raises(TypeError):
    SCHEMA.encode(dict(VALUES, id=1.5))


def test_task_specs_are_the_originals():
  fixed = tf.io.FixedLenFeature
  sequences = {
    k: fixed([8], tf.int64) for k in ("input_ids", "input_mask", "segment_ids")
  }
  assert task_schemas.squad_schema(8, False).parse_spec() == dict(
    sequences, unique_ids=fixed([], tf.int64)
  )
  assert task_schemas.squad_schema(8, True).parse_spec() == dict(
    sequences,
    unique_ids=fixed([], tf.int64),
    start_positions=fixed([], tf.int64),
    end_positions=fixed([], tf.int64),
    is_impossible=fixed([], tf.int64),
  )
  assert task_schemas.classifier_schema(8, True).parse_spec() == dict(
    sequences,
    label_ids=fixed([], tf.float32),
    is_real_example=fixed([], tf.int64),
  )
  assert task_schemas.pretraining_schema(8, 3).parse_spec() == dict(
    sequences,
    masked_lm_positions=fixed([3], tf.int64),
    masked_lm_ids=fixed([3], tf.int64),
    masked_lm_weights=fixed([3], tf.float32),
    next_sentence_labels=fixed([1], tf.int64),
  )


def test_tfrecord_writer_files_read_back(tmp_path):
  # Lengths around the 4-byte checksum step, an empty record, and more
  # records than one checksum batch.
  records = [bytes(range(n % 7)) * (n % 5) for n in range(5000)]
  path = tmp_path / "a.tfrecord"
  with tfrecord_writer(str(path)) as writer:
    for record in records:
      writer.write(record)
  assert [r.numpy() for r in tf.data.TFRecordDataset(str(path))] == records
  assert sorted(p.name for p in tmp_path.iterdir()) == ["a.tfrecord"]


def test_tfrecord_writer_leaves_nothing_on_error(tmp_path):
  with pytest.raises(RuntimeError):
    with tfrecord_writer(str(tmp_path / "a.tfrecord")) as writer:
      writer.write(b"x")
      raise RuntimeError("stop")
  assert not list(tmp_path.iterdir())
