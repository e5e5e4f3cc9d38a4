# STARTUP holds TensorFlow's log lines verbatim, some over 80 columns.
# ruff: noqa: E501
"""bert_tf/runtime/quiet.py: TensorFlow's start-up lines and Beam's worker INFO
off, warnings and errors kept."""

import os
import subprocess
import sys

import pytest

from bert_tf.runtime import quiet
from tests.conftest import REPO

# What `import tensorflow` + the first device listing printed on this
# 2-core machine (TF 2.21, no GPU), then a real error after it.
STARTUP = """\
WARNING: All log messages before absl::InitializeLog() is called are written to STDERR
I0000 00:00:1795707149.470010    5543 port.cc:153] oneDNN custom operations are on. You may see ...
I0000 00:00:1795707149.475393    5543 cudart_stub.cc:31] Could not find cuda drivers on your machine, GPU will not be used.
I0000 00:00:1795707442.023633   14110 cpu_feature_guard.cc:227] This TensorFlow binary is optimized ...
To enable the following instructions: AVX2 AVX512F FMA, in other operations, rebuild TensorFlow.
W0000 00:00:1795707442.1   14110 some.cc:1] a warning
E0000 00:00:1795707184.508617    5980 cuda_platform.cc:52] failed call to cuInit: INTERNAL: CUDA error
/x.py:7: UserWarning: a real warning
E0000 00:00:1795707184.6    5980 op.cc:9] a real error
"""


def kept(keep, text):
  return [line for line in text.splitlines(keepends=True) if keep(line)]


def test_startup_lines_below_the_level_go_with_their_continuations():
  assert kept(quiet.StartupFilter(2), STARTUP) == [
    "/x.py:7: UserWarning: a real warning\n",
    "E0000 00:00:1795707184.6    5980 op.cc:9] a real error\n",
  ]
  lines = STARTUP.splitlines(keepends=True)
  assert kept(quiet.StartupFilter(1), STARTUP) == lines[5:6] + lines[7:]
  assert kept(quiet.StartupFilter(0), STARTUP) == lines  # The user's 0.


def test_cuinit_failure_is_kept_when_a_driver_was_found():
  text = "".join(
    line
    for line in STARTUP.splitlines(keepends=True)
    if "cudart_stub" not in line
  )
  assert any("cuInit" in line for line in kept(quiet.StartupFilter(2), text))


def test_beam_worker_info_goes_warnings_and_errors_stay():
  lines = [
    "INFO:__main__:Logging handler created.\n",
    "INFO:apache_beam.runners.worker.sdk_worker:Control channel established.\n",
    "WARNING:root:apitools not found, and bigquery client libraries "
    "are not available\n",
    "WARNING:__main__:No semi_persistent_directory found: ...\n",
    "WARNING:root:a real warning\n",
    "ERROR: bad record in shard 3\n",
  ]
  assert [line for line in lines if quiet.beam_worker_line(line)] == (lines[4:])


@pytest.mark.parametrize(
  "argv, verbose",
  [
    (["x"], False),
    (["x", "--verbosity=1"], True),
    (["x", "-v", "2"], True),
    (["x", "--verbosity=-1"], False),
    (["x", "--v=0"], False),
    (["x", "--verbosity", "1"], True),
    (["x", "--vocab_file=v"], False),
  ],
)
def test_verbosity_turns_the_filters_off(argv, verbose):
  assert quiet._verbose(argv) is verbose  # pylint: disable=protected-access


def run_python(code, **env):
  return subprocess.run(
    [sys.executable, "-c", code],
    cwd=REPO,
    capture_output=True,
    text=True,
    env=dict(os.environ, **env),
    timeout=120,
    check=True,
  )


@pytest.mark.process
def test_importing_tensorflow_prints_nothing_and_warnings_stay():
  code = (
    "from bert_tf.runtime import quiet\n"
    "quiet.quiet_tensorflow(['x'])\n"
    "import warnings\n"
    "import tensorflow as tf\n"
    "tf.constant(1) + 1\n"
    "warnings.warn('kept')\n"
  )
  assert run_python(code).stderr == "<string>:6: UserWarning: kept\n"


@pytest.mark.process
def test_children_lines_pass_the_filter_live_and_in_order():
  code = (
    "import subprocess\n"
    "from bert_tf.runtime import quiet\n"
    "with quiet.filtered_stderr(quiet.beam_worker_line):\n"
    "  subprocess.run(['sh', '-c', 'echo INFO:w:noise >&2; "
    "echo ERROR: one >&2; echo INFO:w:more >&2'])\n"
    "  subprocess.run(['sh', '-c', 'echo ERROR: two >&2'])\n"
    "import sys\n"
    "sys.stderr.write('after\\n')\n"
  )
  assert run_python(code).stderr == "ERROR: one\nERROR: two\nafter\n"
