"""TFRecord files written without TensorFlow (NumPy CRC32C).

A TFRecord file is a sequence of
    uint64 length | uint32 masked_crc32c(length) | data |
    uint32 masked_crc32c(data)
(little-endian). TensorFlow is slow to import (seconds, hundreds of MB), which
dominates a small data-preparation job and every worker process; the
checksums here are computed for thousands of records at once, one byte column
per NumPy step. Files are written atomically (remote paths via tf.io.gfile).

Example:
    write_tfrecord_file("out/train.tfrecord", [example_bytes, ...])
"""

import struct

import numpy as np

from bert_tf.io_utils import atomic_output

_CHUNK = 4096  # records per checksum batch


def _crc32c_table():
  table = np.arange(256, dtype=np.uint32)
  for _ in range(8):  # reflected Castagnoli polynomial
    table = np.where(table & 1, (table >> 1) ^ np.uint32(0x82F63B78),
                     table >> 1).astype(np.uint32)
  return table


_TABLE = _crc32c_table()


def crc32c_many(chunks):
  """CRC32C (Castagnoli, as TFRecord uses) of each bytes object."""
  lengths = np.fromiter(map(len, chunks), np.int64, len(chunks))
  order = np.argsort(-lengths, kind="stable")  # longest first
  lengths = lengths[order]
  width = int(lengths[0]) if len(chunks) else 0
  # columns[p] = byte p of every chunk (longest first), zero past the end.
  columns = np.zeros((width, len(chunks)), np.uint8)
  columns.T[np.arange(width) < lengths[:, None]] = np.frombuffer(
      b"".join([chunks[i] for i in order]), np.uint8)
  active = np.searchsorted(-lengths, -np.arange(width), side="left")
  crc = np.full(len(chunks), 0xFFFFFFFF, np.uint32)
  for p in range(width):
    # Chunks still running at byte p are a prefix, as they are sorted.
    n = active[p]
    head = crc[:n]
    crc[:n] = _TABLE[(head ^ columns[p, :n]) & 0xFF] ^ (head >> 8)
  result = np.empty_like(crc)
  result[order] = crc ^ np.uint32(0xFFFFFFFF)
  return result


def _masked(crc):
  crc = crc.astype(np.uint64)
  return ((((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF).astype(
      "<u4")


def frame_records(records):
  """The bytes of a TFRecord file holding `records`, in order."""
  lengths = [struct.pack("<Q", len(r)) for r in records]
  length_crcs = _masked(crc32c_many(lengths)).tobytes()
  data_crcs = _masked(crc32c_many(records)).tobytes()
  parts = []
  for i, record in enumerate(records):
    parts += [lengths[i], length_crcs[4 * i:4 * i + 4], record,
              data_crcs[4 * i:4 * i + 4]]
  return b"".join(parts)


def write_tfrecord_file(path, records):
  """Writes the records to `path` as a TFRecord file, atomically."""
  with atomic_output(path, "wb") as f:
    for start in range(0, len(records), _CHUNK):
      f.write(frame_records(records[start:start + _CHUNK]))
