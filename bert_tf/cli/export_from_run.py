"""`export_saved_model --checkpoint=<run folder>`: the run's own settings.

A run folder records what its model is (`run_config.json`, written by every
training script and the Python API). Exporting it takes the task, the
tokenizer (vocabulary, lower-casing), max_seq_length, the labels and the
head settings from there, so a flag the user forgot cannot silently change
the model's answers (an uncased run exported with `--do_lower_case=False`
did); a flag that contradicts the run is refused in one line. The weights
are `best/` when the run kept one (`--best_metric`), unless `--use_latest`.

Example:
    settings, checkpoint = apply_run_settings(FLAGS)   # before exporting
"""

import os

from bert_tf.io_utils import InputError
from bert_tf.runs import run_config
from bert_tf.runs import run_files
from bert_tf.runs import run_folder

# Export tasks that read only the encoder: they fit a run of any task.
_ENCODER_ONLY = ("encoder", "tfhub_encoder")


def _set(flag_values, name, value, folder, same=lambda a, b: a == b):
  """Gives flag `name` the run's value, or refuses a different one the user
  gave."""
  if name not in flag_values or value is None:
    return
  flag = flag_values[name]
  if not flag.present:
    flag.value = value
  elif not same(flag.value, value):
    raise InputError(
      "--%s=%s contradicts the run in --checkpoint=%s (%s: %s); leave it "
      "out, or export another checkpoint"
      % (name, flag.value, folder, run_config.FILE, value)
    )


def _head_values(settings, flag_values):
  """{flag: value} of the run's head and sequence settings."""
  head = settings.head
  values = dict(settings.sequence)
  if settings.task == "classifier":
    given = [
      n
      for n in ("task_name", "labels", "labels_file", "regression")
      if flag_values[n].present
    ]
    if not given:  # one label source, as the exporter wants
      if head.get("regression"):
        values["regression"] = True
      else:
        values["labels"] = head.get("labels")
    elif "labels" in given:
      values["labels"] = head.get("labels")
  elif settings.task == "ner":
    values.update(
      labels=head.get("labels"),
      feature_mode=head.get("feature_mode"),
      lstm_units=head.get("lstm_units"),
    )
    if flag_values["labels_file"].present:
      values.pop("labels")
  elif settings.task == "pretraining":
    values["max_predictions_per_seq"] = head.get("max_predictions_per_seq")
  return values


def apply_run_settings(flag_values):
  """Fills the export flags from --checkpoint's run_config.json.

  Returns:
    (RunConfig or None for a checkpoint outside a run folder, the
    checkpoint to restore: for a run folder its best/ when it has one and
    --use_latest is not set, else --checkpoint).
  Raises:
    InputError: a flag contradicting the run.
  """
  checkpoint = flag_values.checkpoint
  # A run folder, or a ckpt-N prefix inside one.
  folder = (
    checkpoint
    if os.path.isdir(checkpoint)
    else os.path.dirname(checkpoint) or "."
  )
  settings = run_config.read(folder)
  if not settings:
    return None, checkpoint
  task = flag_values.task
  if task is None:
    flag_values.task = task = settings.task
  elif task != settings.task and task not in _ENCODER_ONLY:
    raise InputError(
      "--task=%s contradicts the run in --checkpoint=%s "
      "(a %s run)" % (task, folder, settings.task)
    )
  # The run folder's own tokenizer file (an older record's absolute path).
  for name, path in run_config.tokenizer_files(folder, settings).items():
    _set(flag_values, name, path, folder, run_folder.same_content)
  _set(
    flag_values,
    "do_lower_case",
    settings.tokenizer.get("do_lower_case"),
    folder,
  )
  _set(flag_values, "max_seq_length", settings.max_seq_length, folder)
  if task == settings.task:
    for name, value in _head_values(settings, flag_values).items():
      _set(
        flag_values,
        name,
        value,
        folder,
        lambda a, b: (
          (list(a) if isinstance(a, (list, tuple)) else a)
          == (list(b) if isinstance(b, (list, tuple)) else b)
        ),
      )
  best = os.path.join(folder, run_files.BEST_DIR, run_files.BEST_CHECKPOINT)
  if (
    checkpoint == folder
    and os.path.exists(best + ".index")
    and not flag_values.use_latest
  ):
    return settings, best
  return settings, checkpoint
