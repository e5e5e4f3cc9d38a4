"""TFRecord files written without TensorFlow (NumPy CRC32C): the one writer.

A TFRecord file is a sequence of
    uint64 length | uint32 masked_crc32c(length) | data |
    uint32 masked_crc32c(data)
(little-endian). TensorFlow is slow to import (seconds, hundreds of MB), which
dominates a small data-preparation job and every worker process. Python has
no CRC32C, so checksums are computed here for thousands of records at once,
four bytes of every record per NumPy step. Files are written atomically
(remote paths via tf.io.gfile).

Example:
    with tfrecord_writer("out/train.tf_record") as writer:
      for record in records:  # serialized tf.train.Examples
        writer.write(record)
    write_tfrecord_file("out/eval.tf_record", records)
"""

import contextlib
import struct

import numpy as np

from bert_tf.io_utils import atomic_output

_BATCH = 4096  # records per checksum batch


def _byte_tables():
  """Slicing-by-4 tables: tables[k][b] = CRC state of byte b followed by k
  zero bytes (reflected Castagnoli polynomial)."""
  table = np.arange(256, dtype=np.uint32)
  for _ in range(8):
    table = np.where(table & 1, (table >> 1) ^ np.uint32(0x82F63B78),
                     table >> 1).astype(np.uint32)
  tables = [table]
  for _ in range(3):
    previous = tables[-1]
    tables.append((previous >> 8) ^ table[previous & 0xFF])
  return tables


def _word_tables(t0, t1, t2, t3):
  """CRC32C is linear, so the state after a 4-byte word (the state XORed
  in) is LOW[low 16 bits] ^ HIGH[high 16 bits]: two lookups per word."""
  half = np.arange(1 << 16, dtype=np.uint32)
  return t3[half & 0xFF] ^ t2[half >> 8], t1[half & 0xFF] ^ t0[half >> 8]


_BYTE_TABLES = _byte_tables()
_LOW, _HIGH = _word_tables(*_BYTE_TABLES)


def crc32c_many(chunks):
  """CRC32C (Castagnoli, as TFRecord uses) of each bytes object."""
  chunks = list(chunks)
  lengths = np.fromiter(map(len, chunks), np.int64, len(chunks))
  # Every chunk right-aligned in a row of `width` bytes after zeros. From a
  # zero state zeros keep it zero, and starting from 0xFFFFFFFF is the
  # same as XORing 0xFF into the first four data bytes.
  width = -(-max(4, int(lengths.max(initial=0))) // 4) * 4
  rows = np.frombuffer(b"".join([bytes(width - len(c)) + c for c in chunks]),
                       np.uint8).reshape(len(chunks), width).copy()
  starts = width - lengths
  columns = starts[:, None] + np.arange(4)
  in_data = columns < width
  rows[np.nonzero(in_data)[0], columns[in_data]] ^= 0xFF
  words = np.ascontiguousarray(rows.view("<u4").T)
  crc = np.zeros(len(chunks), np.uint32)
  for word in words:
    state = crc ^ word
    crc = _LOW[state & 0xFFFF] ^ _HIGH[state >> 16]
  crc ^= np.uint32(0xFFFFFFFF)
  # Under four bytes the 0xFF also went into the zeros before the data;
  # those few chunks (an empty record) are checked byte by byte.
  for i in np.nonzero(lengths < 4)[0]:
    crc[i] = _crc32c_bytewise(chunks[i])
  return crc


def _crc32c_bytewise(data):
  crc = 0xFFFFFFFF
  table = _BYTE_TABLES[0]
  for byte in data:
    crc = int(table[(crc ^ byte) & 0xFF]) ^ (crc >> 8)
  return crc ^ 0xFFFFFFFF


def _masked(crc):
  crc = crc.astype(np.uint64)
  return ((((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF).astype(
      "<u4")


def frame_records(records):
  """The bytes of a TFRecord file holding `records`, in order."""
  if not records:
    return b""
  lengths = [struct.pack("<Q", len(r)) for r in records]
  length_crcs = _masked(crc32c_many(lengths)).tobytes()
  data_crcs = _masked(crc32c_many(records)).tobytes()
  parts = []
  for i, record in enumerate(records):
    parts += [lengths[i], length_crcs[4 * i:4 * i + 4], record,
              data_crcs[4 * i:4 * i + 4]]
  return b"".join(parts)


class _Writer:
  """Frames records in batches (one checksum pass per batch)."""

  def __init__(self, file):
    self._file = file
    self._pending = []

  def write(self, record):
    self._pending.append(record)
    if len(self._pending) >= _BATCH:
      self.flush()

  def flush(self):
    self._file.write(frame_records(self._pending))
    self._pending = []


@contextlib.contextmanager
def tfrecord_writer(path):
  """Yields a writer (`.write(record)`); `path` appears when the block ends
  without an exception, complete."""
  with atomic_output(path, "wb") as f:
    writer = _Writer(f)
    yield writer
    writer.flush()


def write_tfrecord_file(path, records):
  """Writes the records to `path` as a TFRecord file, atomically."""
  with tfrecord_writer(path) as writer:
    for record in records:
      writer.write(record)
