"""Serialized `tf.train.Example` bytes without importing TensorFlow.

An Example is three nested length-delimited protobuf messages
(Example.features -> Features.feature map entry -> Feature) around a packed
int64 (varints) or float (little-endian float32) list. Encoding by hand is
several times faster than building protos and lets worker processes skip the
TensorFlow import; tests parse the bytes back with TensorFlow. Use it through
`bert_tf.records.schema`, which knows each task's fields.

Example:
    ids = packed_int64([101, 7592, 102])
    weights = pack_float32([1.0, 0.0])
    record = example_bytes([
        entry_header("input_ids", INT64, len(ids)) + ids,
        entry_header("masked_lm_weights", FLOAT32, len(weights)) + weights])
    unpack_int64(ids)  # [101, 7592, 102]
"""

import functools
import operator
import struct

INT64 = "int64"
FLOAT32 = "float32"
_UINT64 = (1 << 64) - 1


def varint(n):
  """Protobuf base-128 varint of an int64 (negatives as two's complement)."""
  n = operator.index(n) & _UINT64
  out = bytearray()
  while n > 0x7F:
    out.append((n & 0x7F) | 0x80)
    n >>= 7
  out.append(n)
  return bytes(out)


class _VarintTable(dict):
  """int -> varint, remembered below 2**16 (every WordPiece id); then
  `map(table.__getitem__, ids)` encodes a whole list at C speed."""

  def __missing__(self, n):
    value = varint(n)
    if 0 <= n < 65536:
      self[n] = value
    return value


VARINTS = _VarintTable()


def packed_int64(values):
  """Packed varints of ints. Values in [0, 128) are their own byte, so a 0/1
  list packs to `bytes(values)`."""
  return b"".join(map(VARINTS.__getitem__, values))


_ENDING_BYTES = bytes(range(0x80))


def count_varints(packed):
  """How many values `packed` varints hold (bytes below 0x80 end one)."""
  return len(packed) - len(packed.translate(None, _ENDING_BYTES))


def _length_delimited(tag, payload):
  return tag + VARINTS[len(payload)] + payload


def _entry(name, feature):
  """A `Features.feature` map entry: name -> Feature."""
  entry = _length_delimited(b"\x0a", name.encode("utf-8")) + _length_delimited(
    b"\x12", feature
  )
  return _length_delimited(b"\x0a", entry)


@functools.lru_cache(maxsize=65536)
def entry_header(name, dtype, size):
  """The bytes of a map entry that precede its `size` packed value bytes."""
  tag = b"\x1a" if dtype == INT64 else b"\x12"  # Feature.int64/float_list
  entry = _entry(
    name, _length_delimited(tag, _length_delimited(b"\x0a", bytes(size)))
  )
  return entry[: len(entry) - size]


def pack_float32(values):
  """Packed little-endian float32s (a float list's payload)."""
  return struct.pack("<%df" % len(values), *values)


def example_bytes(entries):
  """A serialized tf.train.Example from map entries (any order)."""
  return _length_delimited(b"\x0a", b"".join(entries))


def unpack_int64(packed):
  """The int64 values of packed varints (inverse of `packed_int64`)."""
  values = []
  value = shift = 0
  for byte in packed:
    value |= (byte & 0x7F) << shift
    if byte < 0x80:
      values.append(value - (1 << 64) if value >> 63 else value)
      value = shift = 0
    else:
      shift += 7
  if shift:
    raise ValueError("truncated varint")
  return values
