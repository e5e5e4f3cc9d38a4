"""Apache Beam is an extra: one pin in two places, and `--runner` without
it installed ends in one line saying how to install it."""

import subprocess
import sys
import tomllib

import pytest

from tests.conftest import FIXTURES
from tests.conftest import REPO


def _requirements(name):
  lines = (REPO / name).read_text(encoding="utf-8").splitlines()
  return [line for line in lines if line and not line.startswith("#")]


def test_beam_is_an_extra_with_the_makefile_pin():
  project = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))
  beam = project["project"]["optional-dependencies"]["beam"]
  assert beam == _requirements("requirements-beam.txt")
  assert not [line for line in _requirements("requirements.txt")
              if line.startswith("apache-beam")]
  makefile = (REPO / "Makefile").read_text(encoding="utf-8")
  assert "-r requirements-beam.txt" in makefile


@pytest.mark.process
def test_runner_without_beam_says_how_to_install_it(tmp_path):
  code = ("import sys\n"
          "sys.modules['apache_beam'] = None  # as if not installed\n"
          "from data_prep.classifier.__main__ import run\n"
          "run()\n")
  result = subprocess.run(
      [sys.executable, "-c", code, "--task_name=MRPC",
       "--data_dir=%s" % (FIXTURES / "glue" / "MRPC"),
       "--vocab_file=%s" % (FIXTURES / "vocab_uncased.txt"),
       "--output_file=%s" % (tmp_path / "train.tf_record"),
       "--runner=DirectRunner"],
      cwd=REPO, capture_output=True, text=True, check=False)
  assert result.returncode == 1
  assert result.stderr == (
      "ERROR: --runner needs Apache Beam, which is not installed: pip install "
      "-e '.[beam]' (or pip install -r requirements-beam.txt)\n")
  assert not list(tmp_path.iterdir())
