"""The folder-level dependency rules of docs/architecture.md.

Data flows one way (text -> data_prep -> TFRecords -> bert_tf): the library
never imports data_prep, and text -> features code needs no TensorFlow.
Inside the library each layer imports only the layers below it:

    io_utils <- tokenizers, records <- checkpoints <- modeling <- training
             <- tasks <- cli <- scripts (run_*.py)

Imports are read from the source (every `import` / `from` node, function-
local ones included), so a lazy import does not hide a dependency.
"""

import ast
import subprocess
import sys

import pytest

from tests.conftest import REPO

# Layer -> the bert_tf / data_prep packages its modules may import (besides
# itself). `bert_tf.modeling.bert_config` is configuration, not model code.
_ALLOWED = {
    "bert_tf.tokenizers": {"bert_tf.io_utils"},
    "bert_tf.records": {"bert_tf.io_utils"},
    "bert_tf.checkpoints": {"bert_tf.io_utils", "bert_tf.modeling.bert_config"},
    "bert_tf.modeling": {"bert_tf.io_utils", "bert_tf.checkpoints"},
    "bert_tf.training": {"bert_tf.io_utils", "bert_tf.records"},
    "bert_tf.tasks": {"bert_tf.io_utils", "bert_tf.records", "bert_tf.tokenizers",
                      "bert_tf.checkpoints", "bert_tf.modeling",
                      "bert_tf.training"},
    "bert_tf.cli": {"bert_tf"},
    # Pure data: tokenizers, record bytes and flag helpers only.
    "data_prep": {"bert_tf.io_utils", "bert_tf.records", "bert_tf.tokenizers",
                  "bert_tf.tokenization", "bert_tf.cli.bert_flags",
                  "bert_tf.cli.flag_ranges"},
}

# Modules that turn text into features (or read them back) without TF.
_TENSORFLOW_FREE = (
    "data_prep.common.sequence_pairs",
    "data_prep.extract_features.examples",
    "data_prep.pretraining.instances",
    "data_prep.pretraining.records",
    "data_prep.squad.example",
    "data_prep.squad.features",
    "data_prep.squad.records",
    "data_prep.squad.writer",
    "data_prep.squad.postprocess",
    "data_prep.squad.evaluation",
    "data_prep.classifier.processor",
    "data_prep.classifier.features",
    "bert_tf.tokenizers.tokenization",
    "bert_tf.records.example_bytes",
    "bert_tf.records.schema",
    "bert_tf.records.task_schemas",
    "bert_tf.records.tfrecord_file",
    "bert_tf.modeling.bert_config",
    "bert_tf",
)


def _module_name(path):
  parts = list(path.relative_to(REPO).with_suffix("").parts)
  if parts[-1] == "__init__":
    parts.pop()
  return ".".join(parts)


def _imports(path):
  """Every bert_tf / data_prep module `path` imports."""
  for node in ast.walk(ast.parse(path.read_text(), str(path))):
    if isinstance(node, ast.Import):
      names = [alias.name for alias in node.names]
    elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
      names = [node.module + "." + alias.name for alias in node.names]
    else:
      continue
    yield from (n for n in names if n.split(".")[0] in ("bert_tf", "data_prep"))


def _within(name, package):
  return name == package or name.startswith(package + ".")


def _layer(module):
  matches = [layer for layer in _ALLOWED if _within(module, layer)]
  return max(matches, key=len) if matches else None


def _violations():
  for root in ("bert_tf", "data_prep"):
    for path in sorted((REPO / root).rglob("*.py")):
      module = _module_name(path)
      layer = _layer(module)
      if layer is None:  # Top-level facades and io_utils.
        continue
      for name in _imports(path):
        if _within(name, layer):
          continue
        if not any(_within(name, allowed) for allowed in _ALLOWED[layer]):
          yield "%s imports %s" % (module, name)


def test_every_layer_imports_only_the_layers_below_it():
  assert not list(_violations())


def test_the_rules_catch_a_wrong_import(tmp_path, monkeypatch):
  bad = tmp_path / "bert_tf" / "checkpoints" / "bad.py"
  bad.parent.mkdir(parents=True)
  bad.write_text("from bert_tf.modeling.bert_encoder import BertEncoder\n")
  (tmp_path / "data_prep").mkdir()
  (tmp_path / "data_prep" / "x.py").write_text(
      "def f():\n  import tensorflow\n  from bert_tf.tasks import squad\n")
  monkeypatch.setattr(sys.modules[__name__], "REPO", tmp_path)
  assert sorted(_violations()) == [
      "bert_tf.checkpoints.bad imports bert_tf.modeling.bert_encoder."
      "BertEncoder",
      "data_prep.x imports bert_tf.tasks.squad"]


@pytest.mark.parametrize("module", _TENSORFLOW_FREE)
def test_text_to_features_modules_are_tensorflow_free(module):
  code = "import sys, %s; print('tensorflow' in sys.modules)" % module
  result = subprocess.run([sys.executable, "-c", code], cwd=REPO,
                          capture_output=True, text=True, timeout=60,
                          check=True)
  assert result.stdout.strip() == "False"


def test_feature_extractor_reads_the_fields_data_prep_makes():
  # pylint: disable=g-import-not-at-top
  from bert_tf.tasks.feature_extraction import FEATURE_FIELDS
  from data_prep.extract_features.examples import InputFeatures
  assert InputFeatures._fields == FEATURE_FIELDS
