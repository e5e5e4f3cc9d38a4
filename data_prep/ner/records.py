"""Tagging windows -> TFRecord files (TF-free), the features `NerTask`
parses: `input_ids`, `input_mask`, `segment_ids`, `label_ids` (int64) and
`label_weights` (float32: 1 on the first piece of each word the window
predicts), all zero-padded to max_seq_length.

Example:
    count = write_windows("out/train.tf_record", windows, 128)
"""

from bert_tf.records.task_schemas import ner_schema
from bert_tf.records.tfrecord_file import write_tfrecord_file


def window_values(window, max_seq_length):
  """The record's values of one window, zero-padded to max_seq_length."""
  length = len(window.input_ids)
  padding = [0] * (max_seq_length - length)
  return {
    "input_ids": window.input_ids + padding,
    "input_mask": [1] * length + padding,
    "segment_ids": [0] * max_seq_length,
    "label_ids": window.label_ids + padding,
    "label_weights": window.label_weights + padding,
  }


def window_record(window, max_seq_length):
  """The serialized tf.train.Example of one window (the only encoder of
  the record layout)."""
  values = window_values(window, max_seq_length)
  # Mask and segment values are 0/1: their varints are the bytes themselves.
  values["input_mask"] = bytes(values["input_mask"])
  values["segment_ids"] = bytes(values["segment_ids"])
  return ner_schema(max_seq_length).encode(values)


def write_windows(path, windows, max_seq_length):
  """Writes one record per window to `path` (atomically); -> count."""
  write_tfrecord_file(path, [window_record(w, max_seq_length) for w in windows])
  return len(windows)
