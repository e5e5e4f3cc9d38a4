"""Sharded outputs that appear as a set, and workers that die with their
parent: shared by the process pools and the Beam drivers.

A sharded output (`out-00000-of-00004`, ...) is written under temporary names
and renamed in only once every shard is complete, after the shards of an
earlier run of that output (any shard count) are removed: a glob never sees a
partial set, or a mix of two runs. Pool workers ask Linux to signal them
when their parent dies (kill -9 included): they remove the job's temps and
exit, so a killed job leaves no orphans and no files.

Example:
    finals = shard_names("out/train.tfrecord", 4)
    temps = [temp_name(f) for f in finals]
    ...  # write every temp
    publish(temps, finals, "out/train.tfrecord")
"""

import ctypes
import multiprocessing
import os
import signal
import sys

from bert_tf.io_utils import gfile
from bert_tf.io_utils import is_remote
from bert_tf.io_utils import leftover_temps
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
    else:
      try:
        os.remove(path)
      except FileNotFoundError:  # not written, or another process's pass
        pass


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


def remove_temps(temps):
  """Removes `temps` and the partial files `atomic_output` leaves behind
  them when its writer is killed."""
  remove([p for t in temps for p in [t, *leftover_temps(t)]])


def die_with_parent(temps):
  """In a pool worker: die with the parent (kill -9 included), first
  removing the job's `temps`, which nobody else will. Linux only."""
  if sys.platform != "linux":
    return
  # A signal of its own: Linux sends it when the parent's forking thread
  # exits, while getppid() may still name the parent (its other threads are
  # still ending), so a SIGTERM, the pool's way to end the worker of a live
  # parent, could not be told apart from a death.
  parent_died = signal.SIGUSR1

  def on_parent_death(signum, frame):
    del frame
    remove_temps(temps)
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)

  parent_pid = multiprocessing.parent_process().pid
  signal.signal(parent_died, on_parent_death)
  ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, parent_died)
  if os.getppid() != parent_pid:  # it died before prctl took effect
    on_parent_death(parent_died, None)
