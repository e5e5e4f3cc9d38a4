"""input_pipeline: original feature specs, sharding, shuffling, batching."""

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.io_utils import InputError
from bert_tf.tasks import classification as classification_task
from bert_tf.tasks import pretraining as pretraining_task
from bert_tf.tasks import squad as squad_task
from bert_tf.training import input_pipeline

SEQ = 6


def _int_feature(values):
  return tf.train.Feature(int64_list=tf.train.Int64List(value=values))


def _write(path, first_id, count, extra=None):
  with tf.io.TFRecordWriter(str(path)) as writer:
    for i in range(count):
      uid = first_id + i
      features = {
        "unique_ids": _int_feature([uid]),
        "input_ids": _int_feature([uid % 7] * SEQ),
        "input_mask": _int_feature([1] * SEQ),
        "segment_ids": _int_feature([0] * SEQ),
        "start_positions": _int_feature([1]),
        "end_positions": _int_feature([2]),
        "is_impossible": _int_feature([0]),
      }
      features.update(extra or {})
      example = tf.train.Example(features=tf.train.Features(feature=features))
      writer.write(example.SerializeToString())
  return str(path)


def _ids(dataset, batches):
  return np.concatenate(
    [b["unique_ids"].numpy() for b in dataset.take(batches)]
  )


def test_squad_specs_cast_to_int32(tmp_path):
  path = _write(tmp_path / "a.tf_record", 1000000000, 3)
  train = squad_task.feature_spec(SEQ, is_training=True)
  assert "is_impossible" not in train  # The original never parses it.
  assert set(squad_task.feature_spec(SEQ, False)) == {
    "unique_ids",
    "input_ids",
    "input_mask",
    "segment_ids",
  }
  batch = next(iter(input_pipeline.eval_dataset([path], train, 2)))
  assert all(v.dtype == tf.int32 for v in batch.values())
  assert batch["input_ids"].shape == (2, SEQ)
  assert batch["unique_ids"].numpy().tolist() == [1000000000, 1000000001]


def test_classifier_and_pretraining_specs(tmp_path):
  regression = classification_task.feature_spec(SEQ, is_regression=True)
  assert regression["label_ids"].dtype == tf.float32
  assert classification_task.feature_spec(SEQ)["label_ids"].dtype == tf.int64
  specs = pretraining_task.feature_spec(SEQ, 3)
  assert specs["masked_lm_weights"].shape == [3]
  assert specs["next_sentence_labels"].shape == [1]
  extra = {
    "masked_lm_positions": _int_feature([1, 2, 0]),
    "masked_lm_ids": _int_feature([5, 6, 0]),
    "masked_lm_weights": tf.train.Feature(
      float_list=tf.train.FloatList(value=[1.0, 1.0, 0.0])
    ),
    "next_sentence_labels": _int_feature([1]),
  }
  path = _write(tmp_path / "p.tf_record", 0, 2, extra)
  batch = next(iter(input_pipeline.eval_dataset([path], specs, 2)))
  assert batch["masked_lm_weights"].dtype == tf.float32
  assert batch["next_sentence_labels"].dtype == tf.int32
  assert batch["masked_lm_ids"].numpy().tolist() == [[5, 6, 0]] * 2


def test_eval_dataset_keeps_partial_batch_in_order(tmp_path):
  path = _write(tmp_path / "e.tf_record", 0, 7)
  specs = squad_task.feature_spec(SEQ, False)
  batches = [
    b["unique_ids"].numpy().tolist()
    for b in input_pipeline.eval_dataset([path], specs, 3)
  ]
  assert batches == [[0, 1, 2], [3, 4, 5], [6]]


def test_training_records_sharded_per_pipeline(tmp_path):
  path = _write(tmp_path / "t.tf_record", 0, 40)
  specs = squad_task.feature_spec(SEQ, True)
  dataset_fn = input_pipeline.training_dataset_fn([path], specs, 8)
  shards = []
  for index in range(2):
    ctx = tf.distribute.InputContext(2, index, num_replicas_in_sync=2)
    dataset = dataset_fn(ctx)
    assert dataset.element_spec["input_ids"].shape == (4, SEQ)  # 8 / 2.
    shards.append(_ids(dataset, 10))
  assert set(shards[0] % 2) == {0} and set(shards[1] % 2) == {1}
  assert len(set(shards[0].tolist())) > 10
  # Repeated, then shuffled with a 100-record buffer: not the file order.
  assert shards[0][:20].tolist() != list(range(0, 40, 2))


def test_pretraining_files_sharded_and_interleaved(tmp_path):
  paths = [_write(tmp_path / ("f%d" % i), 100 * i, 10) for i in range(3)]
  specs = squad_task.feature_spec(SEQ, False)
  dataset_fn = input_pipeline.training_dataset_fn(
    paths, specs, 4, interleave_files=True
  )
  ctx = tf.distribute.InputContext(2, 1, num_replicas_in_sync=2)
  ids = _ids(dataset_fn(ctx), 20)
  assert set(ids // 100) == {1}  # Pipeline 1 of 2 reads file 1 only.
  whole = _ids(dataset_fn(None), 15)
  assert set(whole // 100) == {0, 1, 2}


def test_first_record_is_checked_against_the_spec(tmp_path):
  train = squad_task.feature_spec(SEQ, is_training=True)
  path = _write(tmp_path / "a.tf_record", 1, 2)
  input_pipeline.check_first_record(path, train, "train_file", "hint")
  longer = squad_task.feature_spec(SEQ + 2, is_training=True)
  with pytest.raises(
    InputError,
    match=(
      r"^--train_file .*a.tf_record: record 0 has 6 values of input_ids, "
      r"the flags expect 8 \(hint\)$"
    ),
  ):
    input_pipeline.check_first_record(path, longer, "train_file", "hint")
  with pytest.raises(
    InputError, match="record 0 has no masked_lm_positions feature"
  ):
    input_pipeline.check_first_record(
      path,
      {**train, **pretraining_task.feature_spec(SEQ, 3)},
      "input_file",
      "hint",
    )
