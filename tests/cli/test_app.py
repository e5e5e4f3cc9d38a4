"""The runner (`bert_tf.runtime.app`): range checks hold however a script is
started, before any work, and which flags count as the project's."""

import os
import subprocess
import sys

from absl import flags
import pytest

from bert_tf.runtime import app
from tests.conftest import REPO

_ARGS = [
  "--eval_batch_size=0",
  "--task_name=mrpc",
  "--data_dir=nowhere",
  "--bert_config_file=nowhere.json",
  "--output_dir=/tmp/never",
]
# The five ways a user starts run_classifier (the last as pip's console
# script wrapper does: argv[0] is the command, then `run()`).
_WAYS = {
  "python run_classifier.py": ["run_classifier.py"],
  "python ./run_classifier.py": ["./run_classifier.py"],
  "python /abs/run_classifier.py": [os.path.join(REPO, "run_classifier.py")],
  "python -m run_classifier": ["-m", "run_classifier"],
  "bert-run-classifier": [
    "-c",
    "import sys; sys.argv[0] = "
    "'bert-run-classifier'; import run_classifier; "
    "run_classifier.run()",
  ],
}


@pytest.mark.process
@pytest.mark.parametrize("way", sorted(_WAYS))
def test_range_checks_hold_however_the_script_is_started(way):
  result = subprocess.run(
    [sys.executable] + _WAYS[way] + _ARGS,
    cwd=REPO,
    capture_output=True,
    text=True,
    timeout=300,
    check=False,
  )
  assert result.returncode == 1, result.stderr[-2000:]
  errors = [l for l in result.stderr.splitlines() if l.startswith("ERROR")]
  assert errors == ["ERROR: flag --eval_batch_size=0: must be >= 1"], (
    result.stderr[-2000:]
  )
  assert "Traceback" not in result.stderr
  assert not os.path.exists("/tmp/never")


def test_project_flags_are_ours_and_not_absl_or_tensorflow():
  values = flags.FlagValues()
  flags.DEFINE_integer(
    "eval_batch_size", 8, "", flag_values=values, module_name="run_classifier"
  )
  flags.DEFINE_integer(
    "delta_threshold",
    1,
    "",
    flag_values=values,
    module_name="tensorflow.python.tpu.flags",
  )
  flags.DEFINE_integer(
    "verbosity", 0, "", flag_values=values, module_name="absl.logging"
  )
  flags.DEFINE_integer(
    "batch_size",
    8,
    "",
    flag_values=values,
    module_name=os.path.join(REPO, "extract_features.py"),
  )
  flags.DEFINE_integer(
    "num_workers",
    8,
    "",
    flag_values=values,
    module_name="data_prep.squad.__main__",
  )
  values.mark_as_parsed()
  sys.modules.setdefault("run_classifier", __import__("run_classifier"))
  assert app.numeric_flags(values) == [
    "batch_size",
    "eval_batch_size",
    "num_workers",
  ]


def test_lazy_import_loads_on_first_use():
  name = "bert_tf.tasks.glue_metrics"
  saved = sys.modules.pop(name, None)
  try:
    module = app.lazy_import(name)
    assert name not in sys.modules  # not even looked up yet
    assert list(module.metric_names("mrpc")) == ["accuracy", "f1"]
    assert name in sys.modules
  finally:
    if saved is not None:
      sys.modules[name] = saved
