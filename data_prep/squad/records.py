"""SQuAD features: the original's `InputFeatures` and the JSON-lines sidecar.

The TFRecords follow `bert_tf.records.task_schemas.squad_schema` (the
original names and types: `unique_ids`, `input_ids`, `input_mask`,
`segment_ids`, plus `start_positions`, `end_positions` and `is_impossible`
when training).

Sidecar (what `write_predictions` needs besides the logits), JSON lines:
  line 1: {"format": "bert_tf.squad_features", "version": 1, ...settings}
  then one line per feature, in TFRecord order:
    {"unique_id": int, "example_index": int, "doc_span_index": int,
     "qas_id": str, "tokens": [str, ...], "doc_offset": int,
     "token_to_orig_map": [int, ...], "token_is_max_context": [bool, ...]}
  `tokens` is `[CLS] query [SEP] span [SEP]` (unpadded); the two lists give
  the original dicts' values for positions doc_offset, doc_offset+1, ...

Example:
    header, features = read_features_sidecar("eval.tf_record.features.jsonl")
"""

import json

from bert_tf.io_utils import InputError
from bert_tf.records.example_bytes import unpack_int64

SIDECAR_FORMAT = "bert_tf.squad_features"
SIDECAR_VERSION = 1


class InputFeatures:
  """One doc span of one example, with the original's attributes."""

  def __init__(
    self,
    unique_id,
    example_index,
    doc_span_index,
    tokens,
    token_to_orig_map,
    token_is_max_context,
    input_ids,
    input_mask,
    segment_ids,
    start_position=None,
    end_position=None,
    is_impossible=None,
  ):
    self.unique_id = unique_id
    self.example_index = example_index
    self.doc_span_index = doc_span_index
    self.tokens = tokens
    self.token_to_orig_map = token_to_orig_map
    self.token_is_max_context = token_is_max_context
    self.input_ids = input_ids
    self.input_mask = input_mask
    self.segment_ids = segment_ids
    self.start_position = start_position
    self.end_position = end_position
    self.is_impossible = is_impossible


def sidecar_header(**settings):
  header = {"format": SIDECAR_FORMAT, "version": SIDECAR_VERSION}
  header.update(settings)
  return (json.dumps(header) + "\n").encode("utf-8")


# The keys in json.dumps order; the lists are written in as JSON text.
# JSON escapes every non-ASCII character, so a line is ASCII and built as
# bytes: a chunk's lines go to the file as they are (`sidecar_lines`), with
# no pass over the ~36 MB of a dev set's sidecar to join, encode or format.
_TAIL = (
  b'"example_index": %d, "doc_span_index": %d, "qas_id": %s, '
  b'"tokens": %s, "doc_offset": %d, "token_to_orig_map": %s, '
  b'"token_is_max_context": %s}\n'
)


def sidecar_tail(
  example_index,
  doc_span_index,
  qas_id,
  json_tokens,
  doc_offset,
  json_orig_map,
  json_max_context,
):
  """A feature's sidecar line after its unique_id (assigned later, in
  order), as bytes; the three lists come as JSON bytes."""
  return _TAIL % (
    example_index,
    doc_span_index,
    json.dumps(qas_id).encode("ascii"),
    json_tokens,
    doc_offset,
    json_orig_map,
    json_max_context,
  )


_ID_PREFIX = b'{"unique_id": %d, '


def sidecar_line(unique_id, tail):
  return _ID_PREFIX % unique_id + tail


def sidecar_lines(tails, first_id):
  """The lines of `tails` with unique ids from `first_id` on, as pieces
  for `file.writelines`."""
  pieces = [None] * (2 * len(tails))
  pieces[0::2] = [
    _ID_PREFIX % i for i in range(first_id, first_id + len(tails))
  ]
  pieces[1::2] = tails
  return pieces


def read_feature(line, values=None):
  """InputFeatures from a sidecar line, plus `qas_id`.

  With `values` (the feature's squad_schema record values, sequences as
  packed bytes) the inputs and training labels are filled in; otherwise
  input_ids/input_mask/segment_ids are None. `is_impossible` is False for
  eval features, as their examples' is.
  """
  record = json.loads(line)
  offset = record["doc_offset"]
  positions = range(offset, offset + len(record["token_to_orig_map"]))
  feature = InputFeatures(
    unique_id=record["unique_id"],
    example_index=record["example_index"],
    doc_span_index=record["doc_span_index"],
    tokens=record["tokens"],
    token_to_orig_map=dict(zip(positions, record["token_to_orig_map"])),
    token_is_max_context=dict(zip(positions, record["token_is_max_context"])),
    input_ids=None,
    input_mask=None,
    segment_ids=None,
  )
  feature.qas_id = record["qas_id"]
  if values is not None:
    feature.input_ids = unpack_int64(values["input_ids"])
    feature.input_mask = list(values["input_mask"])
    feature.segment_ids = list(values["segment_ids"])
    feature.start_position = values.get("start_positions")
    feature.end_position = values.get("end_positions")
    feature.is_impossible = bool(values.get("is_impossible", False))
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
        if line_number == 1:
          header = json.loads(line)
          if header.get("format") != SIDECAR_FORMAT:
            raise ValueError("not a %s file" % SIDECAR_FORMAT)
          continue
        features.append(read_feature(line))
      except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise InputError(
          "%s line %d: bad feature record (%s: %s)"
          % (path, line_number, type(e).__name__, e)
        ) from None
  if header is None:
    raise InputError("%s: empty features file" % path)
  return header, features
