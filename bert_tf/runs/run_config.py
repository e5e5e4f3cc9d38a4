"""run_config.json: what a run's model is, written into every run folder.

The checkpoints of a run hold weights only; their meaning — the task, its
head (labels in id order, number of choices, feature mode...), the model
config, the tokenizer (vocabulary, lower-casing) and the sequence settings —
is recorded here by every training script (and `.save_run()` of the Python
API), so that whatever reads the run later (a resumed run,
`export_saved_model --checkpoint=<run>`, the Python API) takes the same
settings instead of trusting flags to be repeated, and refuses a
contradiction in one line naming both values.

    {"format": "bert_tf.run_config", "version": 2,
     "task": "classifier",
     "head": {"task_name": "mrpc", "labels": ["0", "1"], ...},
     "tokenizer": {"vocab_file": "vocab.txt", "spm_model_file": null,
                   "do_lower_case": true},
     "bert_config_file": "bert_config.json",
     "max_seq_length": 128, "sequence": {"doc_stride": 128, ...},
     "bert_config": {...}, "training": {"learning_rate": 2e-5, ...},
     "kept": ["data"]}

`task`, `head`, `tokenizer.do_lower_case` and `bert_config` are the
identity of the model; `max_seq_length` and `sequence` (doc_stride, ...) are
the defaults of whatever featurizes for it later (export); `training` only
informs (a finished run re-run with another learning rate is not retrained:
the script says so). The tokenizer file and bert_config.json are the run
folder's own copies, named relative to it (`run_folder`), so the folder
moves; version 1 records named the tokenizer file by absolute path and are
still read. `kept` lists what the folder held before the run: the only
entries `--overwrite_output_dir` leaves (`clear`). Every value read is
type-checked: a wrong one is an InputError naming the file and the key.

Example:
    settings = RunConfig("classifier", head={"labels": ["0", "1"]},
                         tokenizer=tokenizer_settings(vocab, True, None),
                         max_seq_length=128, bert_config=config.to_dict())
    check_or_write(output_dir, settings)   # copies vocab.txt, ... in
    settings = read(output_dir)            # None for a folder without one
    tokenizer_files(output_dir, settings)["vocab_file"]
"""

import dataclasses
import json
import os

import tensorflow as tf

from bert_tf.io_utils import atomic_output
from bert_tf.io_utils import InputError
from bert_tf.runs import run_files
from bert_tf.runs import run_folder
from bert_tf.runs import run_values

FILE = "run_config.json"
FORMAT = "bert_tf.run_config"
VERSION = 2
_READABLE = (1, 2)
_TOKENIZER_FILES = ("vocab_file", "spm_model_file")


@dataclasses.dataclass
class RunConfig:
  """The settings of one run (see the module docstring). Before it is
  written, the tokenizer paths and `bert_config_file` are the files to copy
  into the run folder."""

  task: str
  head: dict
  tokenizer: dict
  max_seq_length: int
  bert_config: dict
  sequence: dict = dataclasses.field(default_factory=dict)
  training: dict = dataclasses.field(default_factory=dict)
  bert_config_file: str | None = None
  kept: list | None = None

  def identity(self):
    """{key: value} of everything that makes the model what it is."""
    return {
      "task": self.task,
      "head": self.head,
      "do_lower_case": self.tokenizer.get("do_lower_case"),
      "bert_config": self.bert_config,
    }

  def to_json(self):
    return dict(format=FORMAT, version=VERSION, **dataclasses.asdict(self))


def tokenizer_settings(vocab_file, do_lower_case, spm_model_file):
  """The tokenizer part, naming the files the run copies in."""
  return {
    "vocab_file": None if spm_model_file else vocab_file,
    "spm_model_file": spm_model_file,
    "do_lower_case": bool(do_lower_case),
  }


def read(folder):
  """The RunConfig of a run folder, or None if it has none. InputError
  naming the file for one that is damaged, of another format, or holds a
  value of the wrong type."""
  path = os.path.join(folder, FILE)
  if not tf.io.gfile.exists(path):
    return None
  with tf.io.gfile.GFile(path, "rb") as f:
    raw = f.read()
  try:
    data = run_files.parse_json(raw.decode("utf-8"), path)
  except UnicodeDecodeError:
    raise InputError("%s: not UTF-8 text" % path) from None
  if not isinstance(data, dict) or data.get("format") != FORMAT:
    raise InputError("%s: not a bert_tf run config" % path)
  if data.get("version") not in _READABLE:
    raise InputError(
      "%s: version %r; this bert_tf reads versions %s"
      % (path, data.get("version"), ", ".join(map(str, _READABLE)))
    )
  fields = {f.name for f in dataclasses.fields(RunConfig)}
  try:
    settings = RunConfig(**{k: v for k, v in data.items() if k in fields})
  except TypeError as e:
    raise InputError("%s: %s" % (path, e)) from None
  run_values.check(settings, path)
  return settings


def tokenizer_files(folder, settings):
  """{"vocab_file", "spm_model_file": the path of the file the run folder's
  record names (see `run_folder.resolve`), or None}."""
  where = os.path.join(folder, FILE)
  return {
    key: run_folder.resolve(folder, settings.tokenizer.get(key), key, where)
    for key in _TOKENIZER_FILES
  }


def _first_difference(old, new, prefix=""):
  """The first key (dotted) whose value differs, with both values."""
  for key in list(new) + [k for k in old if k not in new]:  # task first
    a, b = old.get(key), new.get(key)
    if isinstance(a, dict) and isinstance(b, dict):
      found = _first_difference(a, b, prefix + key + ".")
      if found:
        return found
    elif a != b:
      return prefix + key, a, b
  return None


def check_same_model(recorded, settings, where, hint):
  """InputError naming the first identity setting that differs between a
  recorded RunConfig and `settings`; `hint` says what to do."""
  difference = _first_difference(recorded.identity(), settings.identity())
  if difference:
    key, old, new = difference
    raise InputError(
      "%s holds a model with %s=%s, this command asks for %s; "
      "%s" % (where, key, _short(old), _short(new), hint)
    )


def _check_same_files(folder, recorded, settings, hint):
  """The tokenizer files `settings` name hold what the run's own do."""
  for key in _TOKENIZER_FILES:
    old, new = recorded.tokenizer.get(key), settings.tokenizer.get(key)
    # A command that names no such file (run_pretraining.py --do_eval
    # without --vocab_file) uses the run's own.
    if new is None:
      continue
    if old is not None and new is not None:
      try:
        held = run_folder.resolve(folder, old, key, os.path.join(folder, FILE))
      except InputError:
        if os.path.isabs(old):  # an older record, moved: nothing to compare
          continue
        raise
      if run_folder.same_content(held, new):
        continue
    raise InputError(
      "--output_dir=%s holds a model with tokenizer.%s=%s, this command "
      "asks for %s (other contents); %s" % (folder, key, old, new, hint)
    )


def _short(value):
  text = str(value)
  return text if len(text) <= 60 else text[:57] + "..."


def _write_new(folder, settings):
  """Copies the run's own files into `folder` and writes run_config.json
  naming them; on failure the folder is as it was."""
  kept = run_folder.entries(folder)
  tokenizer = dict(settings.tokenizer)
  try:
    for key in _TOKENIZER_FILES:
      if tokenizer.get(key):
        tokenizer[key] = run_folder.place(folder, key, tokenizer[key])
    config = json.dumps(settings.bert_config, indent=2, sort_keys=True)
    config_name = run_folder.place(
      folder,
      "bert_config_file",
      settings.bert_config_file,
      (config + "\n").encode("utf-8"),
    )
    record = dataclasses.replace(
      settings, tokenizer=tokenizer, bert_config_file=config_name, kept=kept
    )
    with atomic_output(os.path.join(folder, FILE)) as f:
      f.write(json.dumps(record.to_json(), indent=2, sort_keys=True) + "\n")
  except BaseException:
    run_folder.remove(
      folder, [n for n in run_folder.entries(folder) if n not in kept]
    )
    raise


def check_or_write(
  folder,
  settings,
  hint="use --overwrite_output_dir to start over, or another --output_dir",
):
  """Records `settings` in a new run folder (with its own copies of the
  tokenizer file and bert_config.json); for a folder that has them
  already, refuses another model or other tokenizer files (the checkpoints
  there would silently be used) and -> the recorded RunConfig's training
  settings that differ ({key: (old, new)}), which the caller reports."""
  recorded = read(folder)
  if recorded is None:
    _write_new(folder, settings)
    return {}
  check_same_model(recorded, settings, "--output_dir=%s" % folder, hint)
  _check_same_files(folder, recorded, settings, hint)
  return {
    key: (recorded.training.get(key), value)
    for key, value in settings.training.items()
    if recorded.training.get(key) != value
  }


def clear(folder, inputs):
  """--overwrite_output_dir: removes what the run recorded in `folder`
  wrote — everything but the lock and its `kept` entries (a record without
  `kept`: everything but the lock), run_config.json last so an interrupted
  clear is redone; a folder without a record is left as it is.

  Args:
    folder: the locked run folder.
    inputs: {flag name: value} of the paths the command reads.
  Raises:
    InputError: an input is inside what would be removed (nothing is), or
      the folder holds checkpoints of no recorded run.
  """
  recorded = read(folder)
  names = run_folder.entries(folder)
  if recorded is None:
    if "checkpoint" in names:
      raise InputError(
        "--output_dir=%s holds checkpoints but no %s (not a run of this "
        "bert_tf): remove them, or use another --output_dir" % (folder, FILE)
      )
    return
  kept = set(recorded.kept or ())
  doomed = sorted((n for n in names if n not in kept), key=lambda n: n == FILE)
  base = os.path.realpath(folder)
  for flag, value in sorted(inputs.items()):
    for path in run_folder.input_paths(value):
      real = os.path.realpath(path)
      if real == base or any(
        real == os.path.join(base, n)
        or real.startswith(os.path.join(base, n) + os.sep)
        for n in doomed
      ):
        raise InputError(
          "--%s=%s is inside --output_dir=%s, which --overwrite_output_dir "
          "would clear: move it out, or use another --output_dir"
          % (flag, value, folder)
        )
  run_folder.remove(folder, doomed)
