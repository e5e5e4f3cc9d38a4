"""Shared test set-up: quiet TF logs, paths to fixtures and the session-wide
fixtures (tiny checkpoints with heads, script data).

`make test-fast` runs `-m "not slow and not process"`: the unit loop. A test
that starts a program, or trains, exports or sweeps end to end in the test
process, carries `@pytest.mark.process` (or its module sets `pytestmark =
pytest.mark.process`); pytest.ini's `--strict-markers` refuses a misspelt
marker.
"""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import pathlib  # pylint: disable=g-import-not-at-top

import pytest  # pylint: disable=g-import-not-at-top

FIXTURES = pathlib.Path(__file__).parent / "fixtures"
REPO = pathlib.Path(__file__).parent.parent


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
