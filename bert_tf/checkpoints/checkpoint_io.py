"""Original TF1 checkpoints <-> Keras variables, through a plain name table.

No model code here: a model (or any object) offers its variables through
`tf1_variables()` -> {original name: variable}, so I/O is a name table.

Example:
    name_map = tf1_name_map(encoder, squad=squad_head)
    report = init_from_checkpoint("uncased_L-12_H-768_A-12/bert_model.ckpt",
                                  name_map)
    ...
    save_tf1_checkpoint("out/bert_model.ckpt", name_map)

Loading follows the original `init_from_checkpoint`: every variable whose
name is in the checkpoint is loaded; the others keep their initialisers;
checkpoint-only names are ignored, and Adam slots / `global_step` are never
restored. All of it is returned in a `LoadReport` and logged as one line
(every name at --verbosity=1). Writing uses
`tf.raw_ops.SaveV2`, the op the TF1 Saver uses, so the original code reads it.
"""

import collections
import os
import re

from absl import logging
import numpy as np
import tensorflow as tf

from bert_tf.io_utils import atomic_output
from bert_tf.io_utils import InputError

LoadReport = collections.namedtuple(
  "LoadReport",
  ["loaded", "not_in_checkpoint", "checkpoint_only", "optimizer_state"],
)

_OPTIMIZER_STATE = re.compile(r"(^|/)(global_step|adam_m|adam_v)$")


def is_optimizer_state(name):
  """True for `global_step` and `<var>/adam_m`, `<var>/adam_v` slots."""
  return bool(_OPTIMIZER_STATE.search(name))


def tf1_name_map(encoder=None, **heads):
  """Original TF1 name -> variable for the encoder and any heads.

  Each argument is an object with `tf1_variables()` (the encoder and every
  head class); the keyword names are only labels, e.g.
  `tf1_name_map(encoder, squad=squad_head)`.
  """
  name_map = {}
  for part in [encoder] + list(heads.values()):
    if part is not None:
      name_map.update(part.tf1_variables())
  return name_map


def folder_format(path):
  """The layout of a model folder that holds no TF checkpoint: "hf"
  (HuggingFace), "tfhub" (a SavedModel), else None."""
  if os.path.isfile(os.path.join(path, "saved_model.pb")):
    return "tfhub"
  if os.path.isfile(os.path.join(path, "config.json")) and any(
    name.endswith(".safetensors") or name == "pytorch_model.bin"
    for name in os.listdir(path)
  ):
    return "hf"
  return None


def _convert_hint(path):
  """How to make a checkpoint of model folder `path`, or ""."""
  kind = folder_format(path)
  if not kind:
    return ""
  return (
    " (a %s: convert it with `python -m bert_tf.convert_checkpoint "
    "--input_format=%s --input=%s --output_dir=DIR`)"
    % ("HuggingFace model" if kind == "hf" else "SavedModel", kind, path)
  )


def resolve_checkpoint(path):
  """A checkpoint prefix, a directory with a `checkpoint` state file, or a
  folder in the original layout (its bert_model.ckpt)."""
  if path and os.path.isdir(path):
    latest = tf.train.latest_checkpoint(path)
    original = os.path.join(path, "bert_model.ckpt")
    if latest is None and tf.io.gfile.exists(original + ".index"):
      return original
    if latest is None:
      raise InputError(
        "%s: directory has no TF checkpoint%s" % (path, _convert_hint(path))
      )
    return latest
  if not path or not tf.io.gfile.exists(path + ".index"):
    raise InputError(
      "%s: no TF checkpoint here (expected %s.index)" % (path, path)
    )
  return path


def checkpoint_shapes(ckpt_prefix):
  """Name -> shape of every variable in a checkpoint."""
  prefix = resolve_checkpoint(ckpt_prefix)
  try:
    return dict(tf.train.list_variables(prefix))
  except (tf.errors.OpError, ValueError) as e:
    raise InputError(
      "%s: unreadable checkpoint (%s)" % (prefix, str(e).splitlines()[0])
    ) from e


def assign_arrays(name_map, shapes, read, source):
  """Loads the named arrays into the mapped variables and logs every name.

  Args:
    name_map: original name -> variable.
    shapes: name -> shape of every array the source holds.
    read: function name -> np.ndarray.
    source: file or folder, for messages.

  Returns:
    A `LoadReport` of sorted name lists.
  """
  for name, variable in sorted(name_map.items()):
    if name in shapes and list(shapes[name]) != list(variable.shape):
      raise InputError(
        "%s: variable %s has shape %s in the checkpoint but %s in the model "
        "(does the config match the checkpoint?)"
        % (source, name, list(shapes[name]), list(variable.shape))
      )
  report = LoadReport(
    loaded=sorted(n for n in name_map if n in shapes),
    not_in_checkpoint=sorted(n for n in name_map if n not in shapes),
    checkpoint_only=sorted(
      n for n in shapes if n not in name_map and not is_optimizer_state(n)
    ),
    optimizer_state=sorted(n for n in shapes if is_optimizer_state(n)),
  )
  for name in report.loaded:
    variable = name_map[name]
    variable.assign(np.asarray(read(name)).astype(variable.dtype))
    logging.vlog(1, "loaded %s %s from %s", name, list(variable.shape), source)
  for name in report.not_in_checkpoint:
    logging.vlog(1, "not in checkpoint, keeps its initializer: %s", name)
  for name in report.checkpoint_only:
    logging.vlog(1, "checkpoint-only, ignored: %s", name)
  logging.info("%s", load_summary(report, source))
  return report


def load_summary(report, source, names_shown=3):
  """One line for a `LoadReport` (the per-variable list is logged at
  --verbosity=1)."""

  def some(names):
    shown = ", ".join(names[:names_shown])
    return shown + (", ..." if len(names) > names_shown else "")

  parts = ["loaded %d variables from %s" % (len(report.loaded), source)]
  if report.not_in_checkpoint:
    parts.append(
      "%d not in it keep their initializer (%s)"
      % (len(report.not_in_checkpoint), some(report.not_in_checkpoint))
    )
  if report.checkpoint_only:
    parts.append(
      "%d checkpoint-only ignored (%s)"
      % (len(report.checkpoint_only), some(report.checkpoint_only))
    )
  if report.optimizer_state:
    parts.append(
      "%d optimizer-state ignored (Adam slots, global_step)"
      % len(report.optimizer_state)
    )
  return "; ".join(parts)


def init_from_checkpoint(ckpt_prefix, name_map):
  """Loads a TF1 (or our) checkpoint into `name_map`; returns a LoadReport."""
  prefix = resolve_checkpoint(ckpt_prefix)
  shapes = checkpoint_shapes(prefix)
  reader = tf.train.load_checkpoint(prefix)

  def read(name):
    try:
      return reader.get_tensor(name)
    except (tf.errors.OpError, IndexError, ValueError) as e:
      # A truncated .data file or a failing checksum.
      raise InputError(
        "%s: unreadable checkpoint, variable %s (%s)"
        % (prefix, name, str(e).splitlines()[0])
      ) from e

  return assign_arrays(name_map, shapes, read, prefix)


def save_tf1_checkpoint(prefix, name_map, global_step=None):
  """Writes `prefix.index` / `prefix.data-00000-of-00001` + `checkpoint`.

  Names and shapes are exactly the keys and variable shapes of `name_map`;
  `global_step` (int) adds the int64 scalar the Estimator keeps.
  """
  names = sorted(name_map)
  tensors = [tf.convert_to_tensor(name_map[n]) for n in names]
  if global_step is not None:
    names.append("global_step")
    tensors.append(tf.constant(global_step, tf.int64))
  directory = os.path.dirname(prefix) or "."
  tf.io.gfile.makedirs(directory)
  tmp_prefix = "%s.tmp-%d" % (prefix, os.getpid())
  with tf.device("/cpu:0"):
    tf.raw_ops.SaveV2(
      prefix=tmp_prefix,
      tensor_names=names,
      shape_and_slices=[""] * len(names),
      tensors=tensors,
    )
  # Data first, index last: a reader never sees an index without its data.
  for suffix in (".data-00000-of-00001", ".index"):
    tf.io.gfile.rename(tmp_prefix + suffix, prefix + suffix, overwrite=True)
  base = os.path.basename(prefix)
  with atomic_output(os.path.join(directory, "checkpoint")) as f:
    f.write(
      'model_checkpoint_path: "%s"\nall_model_checkpoint_paths: "%s"\n'
      % (base, base)
    )
  return prefix


def require_encoder_loaded(report, source):
  """InputError unless every `bert/*` variable came from `source` (a config
  that does not match the checkpoint would otherwise run on random weights)."""
  missing = [n for n in report.not_in_checkpoint if n.startswith("bert/")]
  if missing:
    raise InputError(
      "%s: %d encoder variables missing, e.g. %s (does the "
      "config match the checkpoint?)" % (source, len(missing), missing[0])
    )
