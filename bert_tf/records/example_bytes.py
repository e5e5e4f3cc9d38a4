"""Serialized `tf.train.Example` bytes without importing TensorFlow.

An Example is three nested length-delimited protobuf messages
(Example.features -> Features.feature map entry -> Feature) around a packed
int64 (varints) or float (little-endian float32) list. Encoding by hand is
several times faster than building protos and lets worker processes skip the
TensorFlow import; tests parse the bytes back with TensorFlow.

Example:
    record = example_bytes([
        int64_entry("input_ids", packed_int64([101, 7592, 102])),
        float_entry("masked_lm_weights", [1.0, 0.0]),
    ])
"""

import functools
import struct


def varint(n):
  """Protobuf base-128 varint of a non-negative int."""
  out = bytearray()
  while n > 0x7f:
    out.append((n & 0x7f) | 0x80)
    n >>= 7
  out.append(n)
  return bytes(out)


# Varints of ids below 2**16 (every WordPiece vocabulary) by table lookup.
_VARINTS = [varint(i) for i in range(1 << 16)]


def packed_int64(values):
  """Packed varints of non-negative ints. 0/1 lists can use bytes(values)."""
  table = _VARINTS
  return b"".join([table[v] if v < 65536 else varint(v) for v in values])


def _length_delimited(tag, payload):
  n = len(payload)
  return tag + (_VARINTS[n] if n < 65536 else varint(n)) + payload


def _entry(name, feature):
  """A `Features.feature` map entry: name -> Feature."""
  entry = (_length_delimited(b"\x0a", name.encode("ascii")) +
           _length_delimited(b"\x12", feature))
  return _length_delimited(b"\x0a", entry)


@functools.lru_cache(maxsize=65536)
def _int64_header(name, size):
  """The bytes of an int64 entry that precede its `size` packed bytes."""
  entry = _entry(name, _length_delimited(
      b"\x1a", _length_delimited(b"\x0a", bytes(size))))
  return entry[:len(entry) - size]


def int64_entry(name, packed):
  """Map entry name -> Feature(int64_list) from `packed_int64` bytes."""
  return _int64_header(name, len(packed)) + packed


def float_entry(name, values):
  """Map entry name -> Feature(float_list) of float32 values."""
  packed = struct.pack("<%df" % len(values), *values)
  return _entry(name, _length_delimited(b"\x12",
                                        _length_delimited(b"\x0a", packed)))


def example_bytes(entries):
  """A serialized tf.train.Example from map entries (any order)."""
  return _length_delimited(b"\x0a", b"".join(entries))
