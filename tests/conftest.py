"""Shared test set-up: quiet TF logs, paths to fixtures, the session-wide
fixtures (tiny checkpoints with heads, script data) and the `process`
marker.

`make test-fast` runs `-m "not slow and not process"`: the unit loop. A test
is `process` if it starts a program: found here from the helpers it reaches
(`_STARTERS`, `subprocess`); end-to-end runs inside the test process are
listed in `_PROCESS_TESTS` or carry `@pytest.mark.process`.
"""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import pathlib  # pylint: disable=g-import-not-at-top
import subprocess  # pylint: disable=g-import-not-at-top

import pytest  # pylint: disable=g-import-not-at-top

FIXTURES = pathlib.Path(__file__).parent / "fixtures"
REPO = pathlib.Path(__file__).parent.parent

# Modules whose helpers start programs: a test that reaches one of them
# (directly, through its module's functions or through its fixtures) or
# the `subprocess` module is a `process` test.
_STARTERS = (
  "tests.helpers.processes",
  "tests.helpers.cli",
  "tests.helpers.scripts",
  "tests.export.standalone",
)
# Tests that are `process` without starting a program: training, SavedModel
# export or an exhaustive sweep end to end in this process (the slowest of
# the unit loop, 2 cores). Prefixes of node ids under tests/: a module, or a
# module::test.
_PROCESS_TESTS = (
  "cli/test_frozen_layers.py",
  "export/test_predict.py",
  "export/test_predict_lists.py",
  "export/test_squad_text.py",
  "tasks/test_pretraining.py::test_trainer_with_dynamic_masking",
  "tasks/test_tagging.py::test_feature_mode",
  "tokenizers/test_tf_text.py::test_saved_model",
  "training/test_mixed_bfloat16.py",
  "training/test_unfreezing.py",
)


def _starts_programs(function, seen):
  """Whether `function`'s code names `subprocess` or a starter helper, or a
  function of its own module that does."""
  code = getattr(function, "__code__", None)
  if code is None or function in seen:
    return False
  seen.add(function)
  names, pending = set(), [code]
  while pending:  # nested functions, lambdas and comprehensions too
    current = pending.pop()
    names.update(current.co_names)
    pending += [c for c in current.co_consts if hasattr(c, "co_names")]
  scope = function.__globals__
  for name in names:
    value = scope.get(name)
    if value is subprocess:
      return True
    module = getattr(value, "__module__", None) or getattr(
      value, "__name__", None
    )
    if module in _STARTERS:
      return True
    if (
      module == function.__module__
      and callable(value)
      and _starts_programs(value, seen)
    ):
      return True
  return False


def _is_process(item):
  if item.nodeid.removeprefix("tests/").startswith(_PROCESS_TESTS):
    return True
  seen = set()
  # pylint: disable-next=protected-access
  fixtures = item._fixtureinfo.name2fixturedefs
  functions = [getattr(item, "function", None)] + [
    definition.func
    for definitions in fixtures.values()
    for definition in definitions
  ]
  return any(_starts_programs(f, seen) for f in functions if f is not None)


def pytest_collection_modifyitems(items):
  for item in items:
    if _is_process(item):
      item.add_marker(pytest.mark.process)


@pytest.fixture
def fixtures_dir():
  return FIXTURES


@pytest.fixture
def vocab_file():
  return str(FIXTURES / "vocab_uncased.txt")


@pytest.fixture(scope="session")
def flipped_data(tmp_path_factory):
  """A run_classifier data folder whose dev set is train flipped
  (tests/helpers/scripts.py `write_flipped_data`)."""
  from tests.helpers import scripts  # pylint: disable=g-import-not-at-top

  return scripts.write_flipped_data(tmp_path_factory.mktemp("flipped"))


@pytest.fixture(scope="session")
def head_checkpoint(tmp_path_factory):
  """`(base, model class, *args) -> (model, prefix)`: fixture checkpoint
  `base`'s encoder + `model class(config of base, *args)`'s random heads as
  an original checkpoint, made once per session for each key."""
  from tests.helpers import checkpoints  # pylint: disable=g-import-not-at-top

  made = {}

  def make(base, model_class, *args):
    key = (base, model_class.__name__) + args
    if key not in made:
      model = model_class(checkpoints.config_of(base), *args)
      folder = tmp_path_factory.mktemp("%s_%s" % (base, model_class.__name__))
      made[key] = model, checkpoints.with_heads(folder, base, model)
    return made[key]

  return make
