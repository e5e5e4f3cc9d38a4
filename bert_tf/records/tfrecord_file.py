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
import glob
import os
import struct

import google_crc32c

from bert_tf.io_utils import atomic_output
from bert_tf.io_utils import gfile
from bert_tf.io_utils import is_remote

_BATCH = 4096  # records per file write
_crc32c = google_crc32c.value
_pack_length = struct.Struct("<Q").pack
_pack_crc = struct.Struct("<I").pack
_HEADER = 12  # length + its checksum
_FOOTER = 4  # the data's checksum


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
    parts += [
      length,
      _masked(_crc32c(length)),
      record,
      _masked(_crc32c(record)),
    ]
  return b"".join(parts)


class _Writer:
  """Frames records in batches (one checksum pass per batch)."""

  def __init__(self, file):
    self._file = file
    self._pending = []

  @property
  def name(self):
    """The path of the file written (for a local file)."""
    return self._file.name

  def write(self, record):
    self._pending.append(record)
    if len(self._pending) >= _BATCH:
      self.flush()

  def flush(self):
    """Writes the pending records through to the OS."""
    self._file.write(frame_records(self._pending))
    self._file.flush()
    self._pending = []


def shards_of(output_file):
  """The files of a sharded set written for `output_file` (Beam's names,
  `<output_file>-SSSSS-of-NNNNN`)."""
  pattern = "-%s-of-%s" % ("[0-9]" * 5, "[0-9]" * 5)
  if is_remote(output_file):
    return gfile().glob(output_file + pattern)
  return glob.glob(glob.escape(output_file) + pattern)


@contextlib.contextmanager
def tfrecord_writer(path):
  """Yields a writer (`.write(record)`); `path` appears when the block ends
  without an exception, complete, and an earlier sharded set of `path`
  (`shards_of`, e.g. from a Beam run) goes: a glob must not find both."""
  with atomic_output(path, "wb") as f:
    writer = _Writer(f)
    yield writer
    writer.flush()
  for shard in shards_of(path):
    if is_remote(shard):
      gfile().remove(shard)
    else:
      os.remove(shard)


def tfrecord_appender(path):
  """A writer appending to local file `path`, which another process has
  open with `tfrecord_writer` (a pool worker's share of the file): what
  `flush()` returns from is in the file."""
  return _Writer(open(path, "ab"))  # pylint: disable=consider-using-with


def write_tfrecord_file(path, records):
  """Writes the records to `path` as a TFRecord file, atomically."""
  with tfrecord_writer(path) as writer:
    for record in records:
      writer.write(record)


def check_framing(path):
  """(number of records, None) if the framing of TFRecord file `path` is
  whole, else (records before the problem, what is wrong).

  TensorFlow's reader takes a file cut inside a record header for its end
  (no error: a run trains on part of its data), so a run that depends on
  every record walks the headers first: each length's checksum, and the
  last record ending at the file's end. Data checksums are left to the
  reader, which checks them.
  """
  size = os.path.getsize(path)
  offset = count = 0
  with open(path, "rb") as f:
    while offset < size:
      f.seek(offset)
      header = f.read(_HEADER)
      if len(header) < _HEADER:
        return count, (
          "cut inside the header of record %d (byte %d of %d; "
          "a truncated file?)" % (count + 1, offset, size)
        )
      if _masked(_crc32c(header[:8])) != header[8:]:
        return count, (
          "record %d has a damaged length (byte %d)" % (count + 1, offset)
        )
      offset += _HEADER + struct.unpack("<Q", header[:8])[0] + _FOOTER
      if offset > size:
        return count, (
          "cut inside record %d (it needs %d bytes, the file "
          "has %d; a truncated file?)" % (count + 1, offset, size)
        )
      count += 1
  return count, None
