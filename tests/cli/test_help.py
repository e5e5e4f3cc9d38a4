"""`--helpshort` of every entry point lists its flags, the same however the
command is started, and without importing TensorFlow.

Each `[project.scripts]` console script is run as pip's wrapper runs it
(argv[0] the command name, `module.run()`) and as `python -m module` (or
`python run_x.py` for the root scripts); the flag listings must be equal and
hold the command's key flags. TensorFlow is made unimportable in the
console-script run, so a help that loads it fails here.
"""

import concurrent.futures
import os
import re
import subprocess
import sys
import tomllib

import pytest

from tests.conftest import REPO

with open(os.path.join(REPO, "pyproject.toml"), "rb") as _f:
  SCRIPTS = tomllib.load(_f)["project"]["scripts"]

# Flags each command's --helpshort must list (its own and shared ones).
KEY_FLAGS = {
  "bert-run-squad": [
    "train_file",
    "predict_file",
    "doc_stride",
    "vocab_file",
    "bert_config_file",
    "init_checkpoint",
    "max_seq_length",
    "eval_every_steps",
    "best_metric",
    "train_batch_size",
    "dtype",
    "spm_model_file",
  ],
  "bert-run-classifier": [
    "data_dir",
    "task_name",
    "do_eval",
    "eval_batch_size",
    "vocab_file",
    "max_seq_length",
    "text_a_column",
    "predict_checkpoint",
    "num_frozen_layers",
  ],
  "bert-run-pretraining": [
    "input_file",
    "num_train_steps",
    "max_predictions_per_seq",
    "dynamic_masking",
    "eval_every_steps",
    "bert_config_file",
  ],
  "bert-run-ner": [
    "data_dir",
    "feature_mode",
    "labels",
    "eval_every_steps",
    "best_metric",
    "predict_checkpoint",
    "vocab_file",
  ],
  "bert-run-multiple-choice": [
    "data_dir",
    "eval_every_steps",
    "best_metric",
    "early_stopping_patience",
    "vocab_file",
    "train_records",
  ],
  "bert-extract-features": [
    "input_file",
    "output_file",
    "layers",
    "vocab_file",
    "bert_config_file",
    "init_checkpoint",
    "max_seq_length",
  ],
  "bert-create-pretraining-data": [
    "input_file",
    "output_file",
    "vocab_file",
    "dupe_factor",
    "runner",
  ],
  "bert-squad-features": [
    "input_file",
    "vocab_file",
    "max_seq_length",
    "doc_stride",
    "runner",
    "num_workers",
  ],
  "bert-squad-predictions": ["raw_results_file", "predict_file", "n_best_size"],
  "bert-classifier-features": ["task_name", "data_dir", "vocab_file", "runner"],
  "bert-ner-features": ["input_file", "vocab_file", "runner"],
  "bert-multiple-choice-features": ["input_file", "vocab_file", "runner"],
  "bert-learn-vocab": [
    "input_file",
    "output_file",
    "vocab_size",
    "do_lower_case",
    "runner",
  ],
  "bert-convert-checkpoint": ["input", "input_format", "output_dir"],
  "bert-export-checkpoint": ["output_dir"],
  "bert-fetch-model": ["output_dir"],
  "bert-plot-run": ["output_dir"],
  "bert-plot-attention": ["output_file"],
  "bert-export-saved-model": ["task", "checkpoint", "export_dir", "vocab_file"],
  "bert-predict": ["export_dir", "input_file", "output_file", "batch_size"],
}

_BLOCK_TF = (
  "import sys; sys.modules['tensorflow'] = None; "
  "sys.argv[0] = %r; import %s as m; m.%s()"
)
_ALLOW_TF = "import sys; sys.argv[0] = %r; import %s as m; m.%s()"
# Its flags are the options its exporters declare, and the exporters are
# TensorFlow modules: its help loads TensorFlow (quietly).
_HELP_NEEDS_TENSORFLOW = ("bert-export-saved-model",)


def _run(args):
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
  result = subprocess.run(
    [sys.executable] + args + ["--helpshort"],
    cwd=REPO,
    env=env,
    capture_output=True,
    text=True,
    timeout=300,
    check=False,
  )
  return result.returncode, result.stdout + result.stderr


def _flag_lines(text):
  """The listing from absl's `flags:` line on, with the module heading
  (argv[0], which differs by design) removed."""
  listing = text[text.index("\nflags:\n") :] if "\nflags:\n" in text else text
  return [
    line
    for line in listing.splitlines()
    if line.startswith(" ") or line.startswith("flags:")
  ]


def _commands(name):
  module, function = SCRIPTS[name].split(":")
  as_script = (_ALLOW_TF if name in _HELP_NEEDS_TENSORFLOW else _BLOCK_TF) % (
    name,
    module,
    function,
  )
  if "." in module:
    other = [
      "-m",
      module[: -len(".__main__")] if module.endswith(".__main__") else module,
    ]
  else:
    other = [module + ".py"]
  return ["-c", as_script], other


@pytest.fixture(scope="module")
def helps():
  """{console script: ((code, text) as console script, (code, text) the
  other way)}, two at a time."""
  jobs = {name: _commands(name) for name in SCRIPTS}
  with concurrent.futures.ThreadPoolExecutor(2) as pool:
    futures = {
      name: (pool.submit(_run, a), pool.submit(_run, b))
      for name, (a, b) in jobs.items()
    }
    return {name: (a.result(), b.result()) for name, (a, b) in futures.items()}


def test_every_console_script_has_key_flags_listed():
  assert set(KEY_FLAGS) == set(SCRIPTS), "add the new command to KEY_FLAGS"


@pytest.mark.process
@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_helpshort_lists_the_flags_the_same_way_without_tensorflow(helps, name):
  (code, text), (other_code, other_text) = helps[name]
  assert code == 0 and other_code == 0, (text[-2000:], other_text[-2000:])
  listed = set(re.findall(r"^  --(?:\[no\])?(\w+)", text, re.M))
  missing = [flag for flag in KEY_FLAGS[name] if flag not in listed]
  assert not missing, (name, missing, text[-2000:])
  assert _flag_lines(text) == _flag_lines(other_text)
