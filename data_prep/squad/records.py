"""SQuAD feature records: tf.train.Example bytes and the JSON-lines sidecar.

TFRecord features have the original names and types: `unique_ids`,
`input_ids`, `input_mask`, `segment_ids` (int64), plus `start_positions`,
`end_positions` and `is_impossible` when training. The `tf.train.Example`
bytes are encoded by `tf_example_bytes` (no TensorFlow import in worker
processes); tests parse them back with `tf.io.parse_single_example`.

Sidecar (what `write_predictions` needs besides the logits), JSON lines:
  line 1: {"format": "bert_tf.squad_features", "version": 1, ...settings}
  then one line per feature, in TFRecord order:
    {"unique_id": int, "example_index": int, "doc_span_index": int,
     "qas_id": str, "tokens": [str, ...], "doc_offset": int,
     "token_to_orig_map": [int, ...], "token_is_max_context": [bool, ...]}
  `tokens` is `[CLS] query [SEP] span [SEP]` (unpadded); the two lists give
  the original dicts' values for positions doc_offset, doc_offset+1, ...

Example:
    features = read_features_sidecar("eval.tf_record.features.jsonl")
    spec = name_to_features(max_seq_length=384, is_training=False)
"""

import json

from bert_tf.io_utils import InputError
from bert_tf.records import example_bytes as teb
from data_prep.squad.features import InputFeatures

SIDECAR_FORMAT = "bert_tf.squad_features"
SIDECAR_VERSION = 1


def feature_entries(feature, is_training):
  """Serialized map entries of every TFRecord feature but `unique_ids`."""
  # Mask and segment values are 0/1: their varints are the bytes themselves.
  entries = [
      teb.int64_entry("input_ids", teb.packed_int64(feature.input_ids)),
      teb.int64_entry("input_mask", bytes(feature.input_mask)),
      teb.int64_entry("segment_ids", bytes(feature.segment_ids)),
  ]
  if is_training:
    entries.append(label_entries(feature.start_position,
                                 feature.end_position, feature.is_impossible))
  return b"".join(entries)


def label_entries(start_position, end_position, is_impossible):
  """Serialized map entries of the training labels."""
  return (teb.int64_entry("start_positions", teb.varint(start_position)) +
          teb.int64_entry("end_positions", teb.varint(end_position)) +
          teb.int64_entry("is_impossible", teb.varint(int(is_impossible))))


def example_bytes(unique_id, entries):
  """A serialized tf.train.Example: `unique_ids` + the other entries."""
  return teb.example_bytes(
      [teb.int64_entry("unique_ids", teb.varint(unique_id)), entries])


def sidecar_header(**settings):
  header = {"format": SIDECAR_FORMAT, "version": SIDECAR_VERSION}
  header.update(settings)
  return json.dumps(header) + "\n"


def sidecar_line(unique_id, tail):
  return '{"unique_id": %d, %s\n' % (unique_id, tail)


def _feature_from_record(record):
  offset = record["doc_offset"]
  positions = range(offset, offset + len(record["token_to_orig_map"]))
  feature = InputFeatures(
      unique_id=record["unique_id"],
      example_index=record["example_index"],
      doc_span_index=record["doc_span_index"],
      tokens=record["tokens"],
      token_to_orig_map=dict(zip(positions, record["token_to_orig_map"])),
      token_is_max_context=dict(zip(positions,
                                    record["token_is_max_context"])),
      input_ids=None, input_mask=None, segment_ids=None)
  feature.qas_id = record["qas_id"]
  return feature


def read_features_sidecar(path):
  """Returns (header dict, [InputFeatures]) from a sidecar file.

  The features carry what write_predictions needs (and `qas_id`); their
  input_ids/input_mask/segment_ids are None.
  """
  header = None
  features = []
  with open(path, "rb") as f:
    for line_number, line in enumerate(f, 1):
      try:
        record = json.loads(line)
        if line_number == 1:
          if record.get("format") != SIDECAR_FORMAT:
            raise ValueError("not a %s file" % SIDECAR_FORMAT)
          header = record
          continue
        features.append(_feature_from_record(record))
      except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise InputError("%s line %d: bad feature record (%s: %s)" %
                         (path, line_number, type(e).__name__, e)) from None
  if header is None:
    raise InputError("%s: empty features file" % path)
  return header, features


def name_to_features(max_seq_length, is_training):
  """The original's parse spec for `tf.io.parse_single_example`."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  spec = {
      "unique_ids": tf.io.FixedLenFeature([], tf.int64),
      "input_ids": tf.io.FixedLenFeature([max_seq_length], tf.int64),
      "input_mask": tf.io.FixedLenFeature([max_seq_length], tf.int64),
      "segment_ids": tf.io.FixedLenFeature([max_seq_length], tf.int64),
  }
  if is_training:
    spec["start_positions"] = tf.io.FixedLenFeature([], tf.int64)
    spec["end_positions"] = tf.io.FixedLenFeature([], tf.int64)
    spec["is_impossible"] = tf.io.FixedLenFeature([], tf.int64)
  return spec
