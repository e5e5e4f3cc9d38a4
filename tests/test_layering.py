"""The folder-level dependency rules of docs/architecture.md.

Data flows one way (text -> data_prep -> TFRecords -> bert_tf): the library
never imports data_prep, and text -> features code needs no TensorFlow.
Inside the library each layer imports only the layers below it:

    io_utils <- tokenizers, records <- checkpoints <- modeling <- training
             <- tasks <- export <- cli <- api, scripts (run_*.py)

Every module of bert_tf/ and data_prep/ belongs to a layer or is one of the
listed facades (an unknown module fails, it is not skipped), and no two
modules import each other, directly or around a circle. Imports are read
from the source (every `import` / `from` node, function-local ones included),
so a lazy import does not hide a dependency.
"""

import ast
import subprocess
import sys

import pytest

from tests.conftest import REPO

# Layer -> the bert_tf / data_prep packages its modules may import (besides
# itself). `bert_tf.modeling.bert_config` is configuration, not model code.
_BELOW_JOBS = {
  "bert_tf.io_utils",
  "bert_tf.runtime",
  "bert_tf.records",
  "bert_tf.tokenizers",
  "bert_tf.checkpoints",
  "bert_tf.modeling",
  "bert_tf.runs",
  "bert_tf.training",
  "bert_tf.tasks",
  "bert_tf.export",
  "bert_tf.attention",
  # Feature conversion (TensorFlow-free): what the scripts, Beam and the
  # API all call. Never a data_prep command or Beam driver (_NEVER).
  "data_prep",
}
_LAYERS = {
  "bert_tf.io_utils": set(),
  # The process runtime: runner, quiet console, shared flags and checks.
  "bert_tf.runtime": {"bert_tf.io_utils"},
  "bert_tf.tokenizers": {"bert_tf.io_utils"},
  "bert_tf.records": {"bert_tf.io_utils"},
  # Attention maps as data: reader, divergence, figures, the HTML page.
  "bert_tf.attention": {"bert_tf.io_utils"},
  "bert_tf.checkpoints": {"bert_tf.io_utils", "bert_tf.modeling.bert_config"},
  "bert_tf.modeling": {"bert_tf.io_utils", "bert_tf.checkpoints"},
  # Run folders: run_config.json, the files a run writes, its own files.
  "bert_tf.runs": {"bert_tf.io_utils"},
  "bert_tf.training": {"bert_tf.io_utils", "bert_tf.records", "bert_tf.runs"},
  "bert_tf.tasks": {
    "bert_tf.io_utils",
    "bert_tf.records",
    "bert_tf.tokenizers",
    "bert_tf.checkpoints",
    "bert_tf.modeling",
    "bert_tf.runs",
    "bert_tf.training",
  },
  # SavedModels: a task's model plus in-graph tokenization; no flags.
  "bert_tf.export": {
    "bert_tf.io_utils",
    "bert_tf.records",
    "bert_tf.tokenizers",
    "bert_tf.checkpoints",
    "bert_tf.modeling",
    "bert_tf.tasks",
  },
  # One Job per task: flags or keyword arguments -> featurized records,
  # Trainer, evaluation and outputs.
  "bert_tf.jobs": _BELOW_JOBS,
  # The commands (console scripts).
  "bert_tf.cli": _BELOW_JOBS | {"bert_tf.jobs"},
  # The Python API: the Jobs behind the scripts, over in-memory examples.
  "bert_tf.api": _BELOW_JOBS | {"bert_tf.jobs"},
  # Pure data: tokenizers, record bytes and the process runtime.
  "data_prep": {
    "bert_tf.io_utils",
    "bert_tf.records",
    "bert_tf.tokenizers",
    "bert_tf.runtime",
  },
}

# What no other layer imports: data_prep's commands and Beam drivers (the
# library calls data_prep's feature conversion only).
_NEVER = ("data_prep.beam", "__main__")

# The original's module names and the `python -m bert_tf.<command>` shims:
# each forwards to one layer (matched exactly, not as a package).
_FACADES = {
  "bert_tf": {"bert_tf"},  # the curated API, resolved lazily
  "bert_tf.tokenization": {"bert_tf.tokenizers"},
  "bert_tf.optimization": {"bert_tf.training"},
  "bert_tf.convert_checkpoint": {"bert_tf.cli"},
  "bert_tf.export_checkpoint": {"bert_tf.cli"},
  "bert_tf.export_saved_model": {"bert_tf.cli"},
  "bert_tf.fetch_model": {"bert_tf.cli"},
  "bert_tf.plot_run": {"bert_tf.cli"},
  "bert_tf.plot_attention": {"bert_tf.cli"},
  "bert_tf.predict": {"bert_tf.cli"},
}

# Library modules that must import without TensorFlow, besides every data_prep
# module outside beam/ that is not a command (`__main__`).
_LIBRARY_TENSORFLOW_FREE = (
  "bert_tf",
  "bert_tf.io_utils",
  "bert_tf.attention.divergence",
  "bert_tf.attention.figures",
  "bert_tf.attention.maps",
  "bert_tf.attention.page",
  "bert_tf.tokenizers.tokenization",
  "bert_tf.tokenizers.loading",
  "bert_tf.records.example_bytes",
  "bert_tf.records.schema",
  "bert_tf.records.task_schemas",
  "bert_tf.records.tfrecord_file",
  "bert_tf.modeling.bert_config",
  "bert_tf.modeling.fetching",
  "bert_tf.runtime.app",
  "bert_tf.runtime.bert_flags",
  "bert_tf.runtime.flag_checks",
  "bert_tf.runtime.quiet",
  "bert_tf.jobs.engine_flags",
  "bert_tf.jobs.eval_flags",
  "bert_tf.jobs.finetune",
  "bert_tf.jobs.finetune_flags",
  "bert_tf.jobs.registry",
)

# Imports each module with TensorFlow (and Keras) blocked; prints those
# whose import needed it.
_IMPORT_WITHOUT_TENSORFLOW = """
import importlib, sys
class Block:
  def find_spec(self, name, path=None, target=None):
    if name.split(".")[0] in ("tensorflow", "keras", "tf_keras"):
      raise ImportError("blocked: " + name)
sys.meta_path.insert(0, Block())
for module in sys.argv[1:]:
  try:
    importlib.import_module(module)
  except ImportError as e:
    if "blocked: " in str(e):
      print(module, str(e).split("blocked: ")[1])
"""


def _modules(repo):
  """{module name: path} of every bert_tf / data_prep source file."""
  modules = {}
  for root in ("bert_tf", "data_prep"):
    for path in sorted((repo / root).rglob("*.py")):
      parts = list(path.relative_to(repo).with_suffix("").parts)
      if parts[-1] == "__init__":
        parts.pop()
      modules[".".join(parts)] = path
  return modules


def _imports(path):
  """Every bert_tf / data_prep name `path` imports (`module.attribute` for
  `from module import attribute`)."""
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


def _rules(module):
  """(layer or facade, the packages it may import), or (None, None)."""
  if module in _FACADES:
    return module, _FACADES[module]
  matches = [layer for layer in _LAYERS if _within(module, layer)]
  if not matches:
    return None, None
  layer = max(matches, key=len)
  return layer, _LAYERS[layer]


def _violations(repo=REPO):
  for module, path in _modules(repo).items():
    layer, allowed = _rules(module)
    if layer is None:
      yield "%s matches no layer" % module
      continue
    for name in _imports(path):
      if not _within(name, layer) and not any(
        _within(name, package) for package in allowed
      ):
        yield "%s imports %s" % (module, name)
      elif not module.startswith("data_prep") and (
        _within(name, _NEVER[0]) or _NEVER[1] in name.split(".")
      ):
        yield "%s imports %s" % (module, name)


def _graph(repo):
  """{module: the modules it imports}, `from package import name` resolved
  to the module `package.name` when there is one. A package importing its
  own modules (a registry's __init__ loading its entries) is its content,
  not a dependency: that edge is left out."""
  modules = _modules(repo)
  graph = {}
  for module, path in modules.items():
    targets = set()
    for name in _imports(path):
      parts = name.split(".")
      while parts and ".".join(parts) not in modules:
        parts.pop()
      target = ".".join(parts)
      if target and not _within(target, module):
        targets.add(target)
    graph[module] = targets
  return graph


def _cycles(repo=REPO):
  """The import circles: strongly connected components of more than one
  module (Tarjan), each sorted."""
  graph = _graph(repo)
  index, low, stack, on_stack, found = {}, {}, [], set(), []

  def visit(module):
    index[module] = low[module] = len(index)
    stack.append(module)
    on_stack.add(module)
    for target in sorted(graph[module]):
      if target not in index:
        visit(target)
        low[module] = min(low[module], low[target])
      elif target in on_stack:
        low[module] = min(low[module], index[target])
    if low[module] == index[module]:
      component = []
      while not component or component[-1] != module:
        component.append(stack.pop())
        on_stack.discard(component[-1])
      if len(component) > 1:
        found.append(sorted(component))

  for module in sorted(graph):
    if module not in index:
      visit(module)
  return sorted(found)


def _tensorflow_free(repo=REPO):
  return sorted(
    [
      m
      for m in _modules(repo)
      if m.startswith("data_prep")
      and "beam" not in m.split(".")
      and not m.endswith("__main__")
    ]
    + [m for m in _LIBRARY_TENSORFLOW_FREE if m in _modules(repo)]
  )


def _needing_tensorflow(modules, repo=REPO):
  result = subprocess.run(
    [sys.executable, "-c", _IMPORT_WITHOUT_TENSORFLOW] + list(modules),
    cwd=repo,
    capture_output=True,
    text=True,
    timeout=120,
    check=True,
  )
  return result.stdout.splitlines()


def test_every_module_has_a_layer_and_imports_only_the_layers_below_it():
  assert not list(_violations())


def test_no_import_cycles():
  assert not _cycles()


@pytest.mark.process
def test_text_to_features_modules_are_tensorflow_free():
  modules = _tensorflow_free()
  assert {
    "data_prep.ner.features",
    "data_prep.multiple_choice.features",
    "data_prep.pretraining.documents",
  } <= set(modules)
  assert not _needing_tensorflow(modules)


def _plant(root, files):
  for name, text in files.items():
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_the_rules_catch_wrong_imports_and_unknown_modules(tmp_path):
  _plant(
    tmp_path,
    {
      "bert_tf/checkpoints/bad.py": (
        "from bert_tf.modeling.bert_encoder import BertEncoder\n"
      ),
      "bert_tf/export/bad.py": "from bert_tf.runtime import flag_checks\n",
      "bert_tf/newthing.py": "x = 1\n",
      "bert_tf/jobs/bad.py": "from data_prep.squad.features import f\n"
      "from data_prep.beam import squad\n"
      "from data_prep.ner.__main__ import main\n",
      "data_prep/x.py": (
        "def f():\n  import tensorflow\n  from bert_tf.tasks import squad\n"
      ),
    },
  )
  assert sorted(_violations(tmp_path)) == [
    "bert_tf.checkpoints.bad imports bert_tf.modeling.bert_encoder.BertEncoder",
    "bert_tf.export.bad imports bert_tf.runtime.flag_checks",
    "bert_tf.jobs.bad imports data_prep.beam.squad",
    "bert_tf.jobs.bad imports data_prep.ner.__main__.main",
    "bert_tf.newthing matches no layer",
    "data_prep.x imports bert_tf.tasks.squad",
  ]


def test_the_rules_catch_a_cycle(tmp_path):
  _plant(
    tmp_path,
    {
      # A command and its Beam driver importing each other, lazily.
      "data_prep/ner/__main__.py": (
        "def main():\n  from data_prep.beam.ner import write\n"
      ),
      "data_prep/beam/ner.py": "from data_prep.ner.features import f\n"
      "def write():\n  from data_prep.ner.__main__ import main\n",
      "data_prep/ner/features.py": "def f():\n  pass\n",
      # Three modules around a circle, through `from package import module`.
      "bert_tf/training/a.py": "from bert_tf.training import b\n",
      "bert_tf/training/b.py": "import bert_tf.training.c\n",
      "bert_tf/training/c.py": "from bert_tf.training.a import x\n",
    },
  )
  assert _cycles(tmp_path) == [
    ["bert_tf.training.a", "bert_tf.training.b", "bert_tf.training.c"],
    ["data_prep.beam.ner", "data_prep.ner.__main__"],
  ]


@pytest.mark.process
def test_the_tensorflow_free_set_is_derived_and_checked(tmp_path):
  _plant(
    tmp_path,
    {
      "data_prep/__init__.py": "",
      "data_prep/new/__init__.py": "",
      "data_prep/new/reader.py": "import json\n",
      "data_prep/new/heavy.py": "from data_prep.new import uses_tf\n",
      "data_prep/new/uses_tf.py": "import tensorflow as tf\n",
      "data_prep/new/__main__.py": "import tensorflow as tf\n",
      "data_prep/beam/driver.py": "import tensorflow as tf\n",
    },
  )
  modules = _tensorflow_free(tmp_path)
  assert modules == [
    "data_prep",
    "data_prep.new",
    "data_prep.new.heavy",
    "data_prep.new.reader",
    "data_prep.new.uses_tf",
  ]
  assert _needing_tensorflow(modules, tmp_path) == [
    "data_prep.new.heavy tensorflow",
    "data_prep.new.uses_tf tensorflow",
  ]


def test_feature_extractor_reads_the_fields_data_prep_makes():
  # pylint: disable=g-import-not-at-top
  from bert_tf.tasks.feature_extraction import FEATURE_FIELDS
  from data_prep.extract_features.examples import InputFeatures

  assert InputFeatures._fields == FEATURE_FIELDS
