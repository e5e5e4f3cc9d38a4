"""Engine (`Trainer`) checkpoints -> original TF1 checkpoints.

The engine writes object-based TF2 checkpoints (`ckpt-N`, with optimizer
slots and input state). `export_tf1_checkpoint` writes the model of one in
the original layout (`model.tf1_variables()` names plus `global_step`, no
Adam slots), which the original code and every `--init_checkpoint` read.
The CLI is `python -m bert_tf.export_checkpoint`.

Example:
    model = PretrainingModel(config)
    export_tf1_checkpoint(model, "/tmp/pretraining_output", "/tmp/exported")
    # -> /tmp/exported/bert_model.ckpt.{index,data-00000-of-00001}
"""

import os

from absl import logging
import tensorflow as tf

from bert_tf.checkpoints import checkpoint_io
from bert_tf.io_utils import InputError

_STEP_KEY = "optimizer/_iterations/.ATTRIBUTES/VARIABLE_VALUE"


def global_step(reader):
  """The step an engine checkpoint (its `tf.train.load_checkpoint` reader)
  was saved at, or None (an original-format checkpoint's is not read)."""
  if not reader.has_tensor(_STEP_KEY):
    return None
  return int(reader.get_tensor(_STEP_KEY))


def restore_engine_checkpoint(model, prefix):
  """Loads every variable of `model` from a `Trainer` checkpoint.

  Anything unmatched or mis-shaped (another model or config) is an
  InputError.
  """
  try:
    status = tf.train.Checkpoint(model=model).read(prefix).expect_partial()
    status.assert_existing_objects_matched()
  except (AssertionError, ValueError) as e:
    raise InputError(
      "%s: not a checkpoint of this model and config (%s)"
      % (prefix, str(e).splitlines()[0][:200])
    ) from e


def export_tf1_checkpoint(model, model_dir, output_dir):
  """Restores `model` from an engine checkpoint and writes it as TF1.

  Args:
    model: a built model with `tf1_variables()`, e.g. `PretrainingModel`;
      its structure must match the checkpoint's `model`.
    model_dir: a run's output_dir (latest checkpoint) or a checkpoint prefix.
    output_dir: receives `bert_model.ckpt.*` and a `checkpoint` file.

  Returns:
    The prefix written.
  """
  prefix = checkpoint_io.resolve_checkpoint(model_dir)
  restore_engine_checkpoint(model, prefix)
  step = global_step(tf.train.load_checkpoint(prefix))
  output = checkpoint_io.save_tf1_checkpoint(
    os.path.join(output_dir, "bert_model.ckpt"),
    model.tf1_variables(),
    global_step=step,
  )
  logging.info("exported %s (global_step %s) to %s", prefix, step, output)
  return output
