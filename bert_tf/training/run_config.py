"""run_config.json: what a run's model is, written into every run folder.

The checkpoints of a run hold weights only; their meaning — the task, its
head (labels in id order, number of choices, feature mode...), the model
config, the tokenizer (vocabulary, lower-casing) and the sequence settings —
is recorded here by every training script (and `.save_run()` of the Python
API), so that whatever reads the run later (a resumed run,
`export_saved_model --checkpoint=<run>`, the Python API) takes the same
settings instead of trusting flags to be repeated, and refuses a
contradiction in one line naming both values.

    {"format": "bert_tf.run_config", "version": 1,
     "task": "classifier",
     "head": {"task_name": "mrpc", "labels": ["0", "1"], ...},
     "tokenizer": {"vocab_file": "/abs/vocab.txt", "spm_model_file": null,
                   "do_lower_case": true},
     "max_seq_length": 128, "sequence": {"doc_stride": 128, ...},
     "bert_config": {...}, "training": {"learning_rate": 2e-5, ...}}

`task`, `head`, `tokenizer.do_lower_case` and `bert_config` are the
identity of the model; `max_seq_length` and `sequence` (doc_stride, ...) are
the defaults of whatever featurizes for it later (export); `training` only
informs (a finished run re-run with another learning rate is not retrained:
the script says so).

Example:
    settings = RunConfig("classifier", head={"labels": ["0", "1"]},
                         tokenizer=tokenizer_settings(vocab, True, None),
                         max_seq_length=128, bert_config=config.to_dict())
    check_or_write(output_dir, settings)
    settings = read(output_dir)   # None for a folder without one
"""

import dataclasses
import json
import os

import tensorflow as tf

from bert_tf.io_utils import atomic_output
from bert_tf.io_utils import InputError
from bert_tf.training import run_files

FILE = "run_config.json"
FORMAT = "bert_tf.run_config"
VERSION = 1


@dataclasses.dataclass
class RunConfig:
  """The settings of one run (see the module docstring)."""

  task: str
  head: dict
  tokenizer: dict
  max_seq_length: int
  bert_config: dict
  sequence: dict = dataclasses.field(default_factory=dict)
  training: dict = dataclasses.field(default_factory=dict)

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
  """The tokenizer part: absolute paths, so the run folder can move away
  from the command's working directory."""
  absolute = lambda path: (
    os.path.abspath(path) if path and "://" not in (path) else path
  )
  return {
    "vocab_file": None if spm_model_file else absolute(vocab_file),
    "spm_model_file": absolute(spm_model_file),
    "do_lower_case": bool(do_lower_case),
  }


def read(folder):
  """The RunConfig of a run folder, or None if it has none. InputError
  naming the file for one that is damaged or of another format."""
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
  if data.get("version") != VERSION:
    raise InputError(
      "%s: version %r; this bert_tf reads version %d"
      % (path, data.get("version"), VERSION)
    )
  fields = {f.name for f in dataclasses.fields(RunConfig)}
  try:
    return RunConfig(**{k: v for k, v in data.items() if k in fields})
  except TypeError as e:
    raise InputError("%s: %s" % (path, e)) from None


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


def _short(value):
  text = str(value)
  return text if len(text) <= 60 else text[:57] + "..."


def check_or_write(
  folder,
  settings,
  hint="use --overwrite_output_dir to start over, or another --output_dir",
):
  """Records `settings` in a new run folder; for a folder that has them
  already, refuses other model settings (the checkpoints there would
  silently be used) and -> the recorded RunConfig's training settings that
  differ ({key: (old, new)}), which the caller reports."""
  recorded = read(folder)
  path = os.path.join(folder, FILE)
  if recorded is None:
    with atomic_output(path) as f:
      f.write(json.dumps(settings.to_json(), indent=2, sort_keys=True) + "\n")
    return {}
  check_same_model(recorded, settings, "--output_dir=%s" % folder, hint)
  return {
    key: (recorded.training.get(key), value)
    for key, value in settings.training.items()
    if recorded.training.get(key) != value
  }
