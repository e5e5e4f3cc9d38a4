"""A Python program using the API is as quiet as the commands: TensorFlow's
C++ start-up lines (INFO / WARNING, absl's pre-init notice) do not reach
its stderr — unless the program imported TensorFlow itself first, whose
logging bert_tf then leaves as it is."""

import json
import os
import re
import subprocess
import sys

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.process  # starts Python programs

# An absl (C++) INFO or WARNING record, or absl's notice before them.
_NOISE = re.compile(
  r"^([IW]\d{4} [\d:.]+\s+\d+ \S+\] |WARNING: All log messages before absl)",
  re.M,
)
_USER = """
import json, sys
import bert_tf
clf = bert_tf.TextClassifier.from_pretrained(
    sys.argv[1], num_labels=2, max_seq_length=16)
print(json.dumps(clf.predict(["the cat sat", "a dog"])))
"""
_IMPORTED_FIRST = """
import json, logging, os
import tensorflow
level = logging.getLogger("tensorflow").level
import bert_tf
bert_tf.TextClassifier  # resolves the API
print(json.dumps([os.environ.get("TF_CPP_MIN_LOG_LEVEL"),
                  logging.getLogger("tensorflow").level == level]))
"""


def _run(program, *args):
  """(stdout's JSON, stderr) of `program` run as a user would: from
  outside the repository, with no TensorFlow logging variable set."""
  env = {
    k: v
    for k, v in os.environ.items()
    if k not in ("TF_CPP_MIN_LOG_LEVEL", "TF_CPP_MAX_VLOG_LEVEL")
    and k != "TF_CPP_VMODULE"
  }
  env["PYTHONPATH"] = str(REPO)
  result = subprocess.run(
    [sys.executable, "-c", program, *args],
    cwd="/",
    env=env,
    capture_output=True,
    text=True,
    timeout=600,
    check=False,
  )
  assert result.returncode == 0, result.stderr[-3000:]
  return json.loads(result.stdout.splitlines()[-1]), result.stderr


def test_from_pretrained_and_predict_print_no_tensorflow_lines(tiny_folder):
  results, stderr = _run(_USER, tiny_folder)
  assert [r["label"] in ("0", "1") for r in results] == [True, True]
  assert not _NOISE.findall(stderr), stderr


def test_a_program_that_imported_tensorflow_keeps_its_logging():
  (level, same), stderr = _run(_IMPORTED_FIRST)
  assert level is None and same  # nothing set, nothing changed
  # Its own import printed TensorFlow's lines: bert_tf filtered nothing.
  assert _NOISE.findall(stderr)
