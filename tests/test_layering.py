"""Data flows one way (text -> data_prep -> TFRecords -> bert_tf): the
library never imports data_prep, and text -> features code needs no
TensorFlow."""

import ast
import subprocess
import sys

from tests.conftest import REPO


def _imported_modules(path):
  tree = ast.parse(path.read_text(), str(path))
  for node in ast.walk(tree):
    if isinstance(node, ast.Import):
      yield from (alias.name for alias in node.names)
    elif isinstance(node, ast.ImportFrom) and node.module:
      yield node.module


def test_bert_tf_does_not_import_data_prep():
  offenders = [path.name for path in sorted((REPO / "bert_tf").glob("*.py"))
               if any(m.split(".")[0] == "data_prep"
                      for m in _imported_modules(path))]
  assert not offenders


def test_text_to_features_modules_are_tensorflow_free():
  code = ("import sys; import data_prep.common.sequence_pairs, "
          "data_prep.extract_features.examples, data_prep.pretraining.instances; "
          "print('tensorflow' in sys.modules)")
  result = subprocess.run([sys.executable, "-c", code], cwd=REPO,
                          capture_output=True, text=True, timeout=60,
                          check=True)
  assert result.stdout.strip() == "False"
