"""TFRecord layouts: one list of fields both writes records and parses them.

A `Schema` is a list of `Field`s: a name, INT64 or FLOAT32, and a length
(None for a scalar, parsed with shape []; a tuple for a matrix, written
flat in row-major order, e.g. (choices, seq_length)). `encode` turns one
record's values into `tf.train.Example` bytes without TensorFlow
(`example_bytes`); `parse_spec` is the matching `tf.io.parse_single_example`
spec, the only place TensorFlow is imported. The original tasks' schemas are in
`bert_tf.records.task_schemas`.

A value is an int/float (scalar fields), a sequence of them, or `bytes`
already packed: varints for INT64 (`example_bytes.packed_int64`; values
below 128 are their own byte, so a 0/1 mask is `bytes(mask)`),
little-endian float32 for FLOAT32. Packed bytes let hot loops reuse
encodings they cache (word-piece ids of a paragraph, padding, masks).

Example:
    schema = Schema([Field("input_ids", INT64, 4), Field("label_ids", INT64)])
    record = schema.encode({"input_ids": [101, 7592, 102, 0], "label_ids": 1})
    spec = schema.parse_spec()  # {"input_ids": FixedLenFeature([4]), ...}
"""

import collections
import math

from bert_tf.records import example_bytes as eb
from bert_tf.records.example_bytes import FLOAT32
from bert_tf.records.example_bytes import INT64

__all__ = ["Field", "Schema", "INT64", "FLOAT32"]


class Field(collections.namedtuple("Field", ["name", "dtype", "length"])):
  """One feature: `length` None means a scalar, a tuple a matrix."""

  @property
  def size(self):
    """How many values a record holds."""
    if self.length is None:
      return 1
    if isinstance(self.length, tuple):
      return math.prod(self.length)
    return self.length

  @property
  def shape(self):
    if self.length is None:
      return []
    if isinstance(self.length, tuple):
      return list(self.length)
    return [self.length]

  def __new__(cls, name, dtype, length=None):
    if dtype not in (INT64, FLOAT32):
      raise ValueError(
        "field %s: dtype must be %s or %s, not %r"
        % (name, INT64, FLOAT32, dtype)
      )
    return super().__new__(cls, name, dtype, length)


def _packed(dtype, length, value):
  """(packed bytes, number of values) of one field's value."""
  if dtype == INT64:
    if length is None:
      return eb.VARINTS[value], 1
    if isinstance(value, bytes):
      return value, eb.count_varints(value)
    return eb.packed_int64(value), len(value)
  if isinstance(value, bytes):
    return value, len(value) // 4
  packed = eb.pack_float32([value] if length is None else value)
  return packed, len(packed) // 4


class Schema:
  """Fields in record order; see the module docstring."""

  def __init__(self, fields):
    self.fields = tuple(fields)
    self.names = tuple(field.name for field in self.fields)
    if len(set(self.names)) != len(self.names):
      raise ValueError("duplicate field names in %s" % (self.names,))

  def entries(self, values):
    """Serialized map entries of the fields present in `values`.

    Part of a record: `example_bytes.example_bytes([part, other_part])`
    joins disjoint parts (e.g. an id added in another process).
    """
    out = []
    for field in self.fields:
      name, dtype, length = field
      if name in values:
        packed, count = _packed(dtype, length, values[name])
        if count != field.size:
          raise ValueError(
            "field %s: %d values, the schema says %s"
            % (name, count, length or "a scalar")
          )
        out.append(eb.entry_header(name, dtype, len(packed)))
        out.append(packed)
    return b"".join(out)

  def encode(self, values):
    """A serialized tf.train.Example with every field of the schema."""
    missing = [name for name in self.names if name not in values]
    extra = sorted(set(values) - set(self.names))
    if missing or extra:
      raise ValueError(
        "record fields: missing %s, unknown %s" % (missing, extra)
      )
    return eb.example_bytes([self.entries(values)])

  def parse_spec(self, omit=()):
    """{name: tf.io.FixedLenFeature} for `tf.io.parse_single_example`;
    fields in `omit` are left out (written but not read)."""
    import tensorflow as tf  # pylint: disable=g-import-not-at-top

    dtypes = {INT64: tf.int64, FLOAT32: tf.float32}
    return {
      f.name: tf.io.FixedLenFeature(f.shape, dtypes[f.dtype])
      for f in self.fields
      if f.name not in omit
    }
