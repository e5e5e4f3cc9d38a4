"""The Trainer's checkpoints in output_dir: what is saved, where, and how a
run resumes when the latest checkpoint is damaged.

A checkpoint holds the model, the optimizer (slots and step) and the Keras
seed-generator states (dropout), plus whatever the caller adds (the input
iterator). Every worker of a multi-worker run must save; only the chief
saves into output_dir, the others into a scratch folder.

Example:
    checkpoint = model_checkpoint(model, optimizer)
    manager = checkpoint_manager(checkpoint, "out", strategy, 5)
    latest = tf.train.latest_checkpoint("out")
    if latest:
      restore_newest_intact(checkpoint, "out", latest)
"""

import tempfile

from absl import logging
import tensorflow as tf

from bert_tf.io_utils import InputError
from bert_tf.training import distribution


def model_checkpoint(model, optimizer, **more):
  """A tf.train.Checkpoint of the model, optimizer and dropout RNG states."""
  # Keras seed-generator states (dropout) are not tracked by the model's
  # checkpoint dependencies; save them so resumed runs draw the same masks.
  weights = {id(v) for v in model.weights}
  random_states = [v for v in model.variables if id(v) not in weights]
  return tf.train.Checkpoint(
    model=model, optimizer=optimizer, random_states=random_states, **more
  )


def checkpoint_manager(checkpoint, output_dir, strategy, keep_checkpoint_max):
  """`ckpt-N` files in output_dir (a scratch folder on non-chief workers)."""
  directory = output_dir
  if not distribution.is_chief(strategy):
    directory = tempfile.mkdtemp(prefix="bert_tf_worker_ckpt_")
  # 0 keeps every checkpoint, as the original's keep_checkpoint_max.
  return tf.train.CheckpointManager(
    checkpoint,
    directory,
    max_to_keep=keep_checkpoint_max or None,
    checkpoint_name="ckpt",
  )


def restore_newest_intact(checkpoint, output_dir, latest):
  """Restores `latest`, or when it is unreadable (a truncated or corrupt
  file) the newest older checkpoint of output_dir that is intact; -> its
  path."""
  state = tf.train.get_checkpoint_state(output_dir)
  older = [
    p
    for p in (state.all_model_checkpoint_paths if state else [])
    if p != latest
  ]
  for path in [latest] + older[::-1]:
    try:
      checkpoint.restore(path).expect_partial()
      return path
    # A truncated .data file can also end in IndexError ("Read less bytes
    # than requested").
    except (tf.errors.OpError, ValueError, IndexError) as e:
      logging.warning(
        "Checkpoint %s is unreadable (%s); trying an older one.",
        path,
        str(e).strip().splitlines()[0][:200],
      )
  raise InputError(
    "%s: no intact checkpoint to resume from (the latest, %s, "
    "is unreadable); remove the damaged ckpt-* files to start "
    "over" % (output_dir, latest)
  )
