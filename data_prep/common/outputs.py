"""Sharded outputs that appear as a set, and workers that die with their
parent: shared by the process pools and the Beam drivers.

A sharded output (`out-00000-of-00004`, ...) is written under temporary names
and renamed in only once every shard is complete, after the shards of an
earlier run of that output (any shard count) are removed: a glob never sees a
partial set, or a mix of two runs. Pool workers ask Linux to kill them when
their parent dies (kill -9 included), so a killed job leaves no orphans.

Example:
    finals = shard_names("out/train.tfrecord", 4)
    temps = [temp_name(f) for f in finals]
    ...  # write every temp
    publish(temps, finals, "out/train.tfrecord")
"""

import ctypes
import os
import signal

from bert_tf.io_utils import gfile
from bert_tf.io_utils import is_remote
from bert_tf.records.tfrecord_file import shards_of

_PR_SET_PDEATHSIG = 1


def shard_names(output_file, num_shards):
  """Beam's default shard names: `<output_file>-SSSSS-of-NNNNN`."""
  return [
    "%s-%05d-of-%05d" % (output_file, i, num_shards) for i in range(num_shards)
  ]


def temp_name(path):
  return path + ".tmp-shard"


def remove(paths):
  """Removes those of `paths` that exist."""
  for path in paths:
    if is_remote(path):
      if gfile().exists(path):
        gfile().remove(path)
    elif os.path.exists(path):
      os.remove(path)


def publish(temps, finals, *output_files):
  """Removes the earlier sets of `output_files` (shards, or the single file
  of a single-process run), then renames each temp to its final name."""
  remove(
    sorted(set(p for f in output_files for p in shards_of(f)) - set(temps))
    + [f for f in output_files if f not in finals]
  )
  for temp, final in zip(temps, finals, strict=True):
    if is_remote(final):
      gfile().rename(temp, final, overwrite=True)
    else:
      os.replace(temp, final)


def die_with_parent():
  """In a worker process: SIGKILL when the parent dies (Linux; a no-op
  elsewhere)."""
  try:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
  except (OSError, AttributeError):
    pass
