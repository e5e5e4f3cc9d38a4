"""Data flows one way (text -> data_prep -> TFRecords -> bert_tf): the
library never imports data_prep, text -> features code needs no TensorFlow,
and what the library reads from data_prep objects is declared by it."""

import ast
import subprocess
import sys

from tests.conftest import REPO

# Text -> features -> TFRecords: importing any of these must not load
# TensorFlow (seconds of start-up and hundreds of MB in every worker).
TENSORFLOW_FREE = [
    "bert_tf.records.example_bytes",
    "bert_tf.records.schema",
    "bert_tf.records.task_schemas",
    "bert_tf.records.tfrecord_file",
    "data_prep.common.sequence_pairs",
    "data_prep.classifier.features",
    "data_prep.classifier.processor",
    "data_prep.extract_features.examples",
    "data_prep.pretraining.instances",
    "data_prep.pretraining.records",
    "data_prep.squad.example",
    "data_prep.squad.features",
    "data_prep.squad.records",
    "data_prep.squad.writer",
]


def _imported_modules(path):
  tree = ast.parse(path.read_text(), str(path))
  for node in ast.walk(tree):
    if isinstance(node, ast.Import):
      yield from (alias.name for alias in node.names)
    elif isinstance(node, ast.ImportFrom) and node.module:
      yield node.module


def test_bert_tf_does_not_import_data_prep():
  paths = sorted((REPO / "bert_tf").rglob("*.py"))
  assert len(paths) > 20
  offenders = [str(path.relative_to(REPO)) for path in paths
               if any(m.split(".")[0] == "data_prep"
                      for m in _imported_modules(path))]
  assert not offenders


def test_text_to_features_modules_are_tensorflow_free():
  code = ("import sys; import %s; "
          "print('tensorflow' in sys.modules)" % ", ".join(TENSORFLOW_FREE))
  result = subprocess.run([sys.executable, "-c", code], cwd=REPO,
                          capture_output=True, text=True, timeout=60,
                          check=True)
  assert result.stdout.strip() == "False"


def test_feature_extractor_reads_the_fields_data_prep_makes():
  # pylint: disable=g-import-not-at-top
  from bert_tf.tasks.feature_extraction import FEATURE_FIELDS
  from data_prep.extract_features.examples import InputFeatures
  assert InputFeatures._fields == FEATURE_FIELDS
