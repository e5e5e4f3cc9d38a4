"""Checks of flag values: each numeric flag's range, declared where the flag
is defined, and the output checks the runner applies before `main`.

A negative --save_checkpoints_steps looped forever and a NaN --learning_rate
trained a NaN model: every integer/float flag of every entry point declares
its range right after its definition (`positive("batch_size")`), as an absl
validator, so a value outside it ends at parsing in one line
(`ERROR: flag --batch_size=0: must be >= 1`); `tests/hostile/
test_flag_ranges.py` fails for a numeric flag without one. (A flag that
takes effect only with another declares it the same way, in `flag_needs`.)
`check_outputs_are_not_inputs` refuses an output file that is one of the
program's input files (`--output_file` == `--input_file` destroyed the
input); `check_output_locations` refuses an output location that cannot be
written (found before hours of work, not after). TensorFlow-free.

Example:
    flags.DEFINE_integer("doc_stride", 128, "...")
    flag_checks.positive("doc_stride")
    flags.DEFINE_float("warmup_proportion", 0.1, "...")
    flag_checks.in_range("warmup_proportion", 0, 1)
"""

import glob
import math
import os
import tempfile

from absl import flags

from bert_tf.io_utils import InputError


class Range:
  """`low <= value <= high` (either bound may be open or absent)."""

  def __init__(self, low=None, high=None, low_open=False):
    self.low, self.high, self.low_open = low, high, low_open

  def error(self, value):
    """Why `value` is out of range, or None (unset flags are not checked)."""
    if value is None:
      return None
    if isinstance(value, float) and not math.isfinite(value):
      return "must be a finite number"
    low, strict = self.low, self.low_open
    if low is not None and isinstance(value, int) and strict:
      low, strict = low + 1, False  # integers: "> 0" reads ">= 1"
    if low is not None and (value <= low if strict else value < low):
      return "must be %s %s" % (">" if strict else ">=", low)
    if self.high is not None and value > self.high:
      return "must be <= %s" % self.high
    return None


def declare(name, allowed, flag_values=flags.FLAGS):
  """Checks flag `name` against the `Range` `allowed` whenever it is parsed
  or set. The validator carries the range (`flag_range`), so tests can find
  a numeric flag without one."""

  def check(value):
    error = allowed.error(value)
    if error:
      raise flags.ValidationError(error)
    return True

  check.flag_range = allowed
  flags.register_validator(name, check, flag_values=flag_values)


def declared_range(flag):
  """The `Range` declared for absl `flag`, or None."""
  for validator in flag.validators:
    checker = getattr(validator, "checker", None)
    if hasattr(checker, "flag_range"):
      return checker.flag_range
  return None


def positive(*names, flag_values=flags.FLAGS):
  """Each flag > 0 (>= 1 for integers)."""
  for name in names:
    declare(name, Range(0, low_open=True), flag_values)


def non_negative(*names, flag_values=flags.FLAGS):
  for name in names:
    declare(name, Range(0), flag_values)


def in_range(name, low, high, flag_values=flags.FLAGS):
  """`low <= value <= high` (e.g. a probability: 0, 1)."""
  declare(name, Range(low, high), flag_values)


def at_least(name, low, flag_values=flags.FLAGS):
  declare(name, Range(low), flag_values)


def finite(*names, flag_values=flags.FLAGS):
  """Any finite number."""
  for name in names:
    declare(name, Range(), flag_values)


# Flags naming files a program writes, and files it reads (comma-separated
# globs allowed), wherever they are defined.
OUTPUT_FILE_FLAGS = ("output_file", "glue_submission_file", "features_file")
INPUT_FILE_FLAGS = (
  "input_file",
  "train_file",
  "eval_file",
  "predict_file",
  "raw_results_file",
  "vocab_file",
  "spm_model_file",
  "bert_config_file",
  "labels_file",
)


def _file_key(path):
  """Identity of a local file: (device, inode) if it exists, else its real
  path (so links and `./x` match too)."""
  try:
    stat = os.stat(path)
    return stat.st_dev, stat.st_ino
  except OSError:
    return os.path.realpath(path)


def _paths(value):
  for part in value.split(","):
    if part and "://" not in part:
      yield from glob.glob(part) or [part]


# Flags naming a model a program reads as a whole: a folder (SavedModel,
# run folder, HF folder) or a checkpoint prefix. (An existing --export_dir
# is bert_tf.predict's model; export_saved_model refuses one that exists.)
INPUT_MODEL_FLAGS = (
  "export_dir",
  "init_checkpoint",
  "checkpoint",
  "input",
  "model_dir",
)


def _is_within(path, folder):
  path, folder = os.path.realpath(path), os.path.realpath(folder)
  return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _model_inputs(flag_values):
  """[(flag, folder read whole or None, files read)] of the model flags
  naming something that exists."""
  models = []
  for name in INPUT_MODEL_FLAGS:
    value = name in flag_values and flag_values[name].value
    if not value or "://" in value:
      continue
    if os.path.isdir(value):
      models.append((name, value, []))
    elif glob.glob(glob.escape(value) + ".*"):  # a checkpoint prefix
      state = os.path.join(os.path.dirname(value), "checkpoint")
      models.append(
        (
          name,
          None,
          glob.glob(glob.escape(value) + ".*")
          + [state] * os.path.isfile(state),
        )
      )
  return models


def check_outputs_are_not_inputs(flag_values):
  """InputError if an output names something the program reads: an input
  file, a file of a checkpoint it loads, a path inside a model folder it
  loads (`predict --output_file=<export_dir>/saved_model.pb` replaced the
  model), or (as --output_dir) the folder of a model it converts."""
  inputs = {}
  for name in INPUT_FILE_FLAGS:
    if name in flag_values and flag_values[name].value:
      for path in _paths(flag_values[name].value):
        inputs.setdefault(_file_key(path), "--%s" % name)
  models = _model_inputs(flag_values)
  for name, folder, files in models:
    for path in files:
      inputs.setdefault(_file_key(path), "a file of --%s" % name)
  for name in OUTPUT_FILE_FLAGS:
    if name in flag_values and flag_values[name].value:
      for path in _paths(flag_values[name].value):
        if _file_key(path) in inputs:
          raise InputError(
            "--%s=%s is the same file as %s: refusing to overwrite an "
            "input" % (name, path, inputs[_file_key(path)])
          )
        for model, folder, _ in models:
          if folder and _is_within(path, folder):
            raise InputError(
              "--%s=%s is inside --%s=%s, which this command reads: "
              "refusing to write into an input" % (name, path, model, folder)
            )
  output_dir = "output_dir" in flag_values and flag_values["output_dir"].value
  if output_dir and "input" in flag_values:
    for model, folder, files in models:
      source = folder or os.path.dirname(files[0])
      if model == "input" and (
        os.path.realpath(output_dir) == os.path.realpath(source)
      ):
        raise InputError(
          "--output_dir=%s is the folder of --input=%s: refusing to write "
          "over the model being converted"
          % (output_dir, flag_values["input"].value)
        )


OUTPUT_DIR_FLAGS = ("output_dir", "export_dir")


def _writable_location(path):
  """None if files can be created at `path` (a folder, existing or not),
  else why not. Probes with a temporary file: permission bits say nothing
  for root, read-only mounts or /proc."""
  folder = path
  while folder and not os.path.exists(folder):
    folder = os.path.dirname(folder.rstrip(os.sep)) or "."
  if not os.path.isdir(folder):
    return "%s is not a directory" % folder
  try:
    with tempfile.TemporaryFile(dir=folder):
      pass
  except OSError as e:
    return "cannot create files in %s (%s)" % (folder, e.strerror or e)
  return None


def check_output_locations(flag_values):
  """InputError before any work if an output folder or file's folder cannot
  be written (a file in the way, read-only, /proc, ...)."""
  for name in OUTPUT_DIR_FLAGS + OUTPUT_FILE_FLAGS:
    if name not in flag_values or not flag_values[name].value:
      continue
    # Read, not written: plot_run's run folder when the PNG goes elsewhere,
    # bert_tf.predict's existing SavedModel.
    if (
      name == "output_dir"
      and "output_file" in flag_values
      and (flag_values["output_file"].value)
    ):
      continue
    if name == "export_dir" and os.path.exists(flag_values[name].value):
      continue
    for path in (
      _paths(flag_values[name].value)
      if name in OUTPUT_FILE_FLAGS
      else [flag_values[name].value]
    ):
      if "://" in path:
        continue
      if name in OUTPUT_FILE_FLAGS and os.path.isdir(path):
        raise InputError("--%s=%s is a directory" % (name, path))
      folder = os.path.dirname(path) if name in OUTPUT_FILE_FLAGS else path
      problem = _writable_location(folder or ".")
      if problem:
        raise InputError("--%s=%s: %s" % (name, path, problem))
