"""Shared test set-up: quiet TF logs, paths to fixtures, the session-wide
fixtures (tiny checkpoints with heads, script data) and the `process`
marker.

`make test-fast` runs `-m "not slow and not process"`: the unit loop. A test
is `process` if it starts a program or trains a model end to end; whole
modules of such tests are listed in `_PROCESS_MODULES`, single tests carry
`@pytest.mark.process`.
"""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import pathlib  # pylint: disable=g-import-not-at-top

import pytest  # pylint: disable=g-import-not-at-top

FIXTURES = pathlib.Path(__file__).parent / "fixtures"
REPO = pathlib.Path(__file__).parent.parent

# Test modules (paths under tests/, or folders ending in "/") made of
# subprocess or end-to-end training runs.
_PROCESS_MODULES = (
    "scripts/", "hostile/", "data_prep/beam/",
    "export/test_bad_requests.py", "export/test_classifier_export.py",
    "export/test_cli.py", "export/test_encoder_pretraining_export.py",
    "export/test_multiple_choice_export.py", "export/test_ner_export.py",
    "export/test_predict.py", "export/test_predict_lists.py",
    "export/test_rest_example.py", "export/test_squad_export.py",
    "export/test_squad_super_bowl.py",
    "training/test_distributed.py", "cli/test_plot_run.py",
    "data_prep/classifier/test_cli.py", "data_prep/squad/test_cli.py",
    "data_prep/squad/test_flags.py",
)


def pytest_collection_modifyitems(items):
  tests = pathlib.Path(__file__).parent
  for item in items:
    module = pathlib.Path(str(item.fspath)).relative_to(tests).as_posix()
    if module.startswith(_PROCESS_MODULES):
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
