"""TFRecord files written without TensorFlow: the one writer.

A TFRecord file is a sequence of
    uint64 length | uint32 masked_crc32c(length) | data |
    uint32 masked_crc32c(data)
(little-endian). TensorFlow is slow to import (seconds, hundreds of MB), which
dominates a small data-preparation job and every worker process; the
checksums come from `google-crc32c` (C, hardware CRC32C where the CPU has
it). Files are written atomically (remote paths via tf.io.gfile).

Example:
    with tfrecord_writer("out/train.tf_record") as writer:
      for record in records:  # serialized tf.train.Examples
        writer.write(record)
    write_tfrecord_file("out/eval.tf_record", records)
"""

import contextlib
import struct

import google_crc32c

from bert_tf.io_utils import atomic_output

_BATCH = 4096  # records per file write
_crc32c = google_crc32c.value
_pack_length = struct.Struct("<Q").pack
_pack_crc = struct.Struct("<I").pack


def crc32c_many(chunks):
  """CRC32C (Castagnoli, as TFRecord uses) of each bytes object."""
  return [_crc32c(chunk) for chunk in chunks]


def _masked(crc):
  return _pack_crc((((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF)


def frame_records(records):
  """The bytes of a TFRecord file holding `records`, in order."""
  parts = []
  for record in records:
    length = _pack_length(len(record))
    parts += [length, _masked(_crc32c(length)), record,
              _masked(_crc32c(record))]
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
