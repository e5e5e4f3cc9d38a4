"""Apache Beam is an extra: one pin in two places, and `--runner` without
it installed ends in one line saying how to install it; Beam-only flags
without `--runner` are refused, not ignored."""

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
  assert not [
    line
    for line in _requirements("requirements.txt")
    if line.startswith("apache-beam")
  ]
  makefile = (REPO / "Makefile").read_text(encoding="utf-8")
  assert "-r requirements-beam.txt" in makefile


def _classifier_job(tmp_path, *flags):
  code = (
    "import sys\n"
    "sys.modules['apache_beam'] = None  # as if not installed\n"
    "from data_prep.classifier.__main__ import run\n"
    "run()\n"
  )
  return subprocess.run(
    [
      sys.executable,
      "-c",
      code,
      "--task_name=MRPC",
      "--data_dir=%s" % (FIXTURES / "glue" / "MRPC"),
      "--vocab_file=%s" % (FIXTURES / "vocab_uncased.txt"),
      "--output_file=%s" % (tmp_path / "train.tf_record"),
    ]
    + list(flags),
    cwd=REPO,
    capture_output=True,
    text=True,
    check=False,
  )


@pytest.mark.process
@pytest.mark.parametrize(
  "flag, message",
  [
    (
      "--runner=DirectRunner",
      "--runner needs Apache Beam, which is not installed: pip install -e "
      "'.[beam]' (or pip install -r requirements-beam.txt)",
    ),
    (
      "--num_output_shards=2",
      "--num_output_shards=2 needs --runner (without it the job writes "
      "--output_file as before)",
    ),
  ],
)
def test_beam_flags_without_beam_end_in_one_line(tmp_path, flag, message):
  result = _classifier_job(tmp_path, flag)
  assert (result.returncode, result.stderr) == (1, "ERROR: %s\n" % message)
  assert not list(tmp_path.iterdir())
