"""`python -m data_prep.classifier`: counts on success, one-line errors."""

import os
import subprocess
import sys

import pytest

from tests.conftest import FIXTURES
from tests.conftest import REPO

pytestmark = pytest.mark.process  # starts programs


def _run(*args):
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
  return subprocess.run(
    [
      sys.executable,
      "-m",
      "data_prep.classifier",
      "--vocab_file=%s" % (FIXTURES / "vocab_uncased.txt"),
    ]
    + list(args),
    cwd=REPO,
    env=env,
    capture_output=True,
    text=True,
    timeout=120,
    check=False,
  )


def test_writes_and_prints_counts(tmp_path):
  out = tmp_path / "eval.tf_record"
  result = _run(
    "--task_name=RTE",
    "--data_dir=%s" % (FIXTURES / "glue/RTE"),
    "--split=dev",
    "--max_seq_length=64",
    "--pad_to_multiple_of=3",
    "--output_file=%s" % out,
  )
  assert result.returncode == 0, result.stderr
  assert result.stdout.splitlines() == [
    "task=rte split=dev examples=4 padding=2 records=6 -> %s" % out,
    "labels: entailment=1, not_entailment=3",
  ]
  assert out.exists()


def _write(path, text):
  path.write_text(text, encoding="utf-8")
  return path


@pytest.mark.parametrize("case", ["task", "file", "column", "label", "empty"])
def test_bad_input_is_one_line(tmp_path, case):
  train = tmp_path / "train.tsv"
  task = "cola"
  expected = {
    "task": "ERROR: --task_name=colaa: unknown task; valid: cola, sst-2, ",
    "file": "ERROR: %s: no such file" % train,
    "column": "ERROR: %s:2: expected at least 4 tab-separated columns, "
    "found 3" % train,
    "label": "ERROR: %s:1: unknown label 'yes' (labels: 0, 1)" % train,
    "empty": "ERROR: %s: empty file" % train,
  }[case]
  if case == "task":
    task = "colaa"
  elif case == "column":
    _write(train, "gj04\t1\t\tFine.\ngj04\t1\tNo text\n")
  elif case == "label":
    _write(train, "gj04\tyes\t\tFine.\n")
  elif case == "empty":
    _write(train, "")
  result = _run(
    "--task_name=%s" % task,
    "--data_dir=%s" % tmp_path,
    "--output_file=%s" % (tmp_path / "out.tf_record"),
  )
  assert result.returncode == 1
  lines = result.stderr.strip().splitlines()
  assert lines[-1].startswith(expected), result.stderr
  assert "Traceback" not in result.stderr
  assert not (tmp_path / "out.tf_record").exists()
