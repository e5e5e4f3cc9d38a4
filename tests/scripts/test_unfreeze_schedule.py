"""run_classifier.py --unfreeze_schedule: each phase logged with its
trainable variables, a run killed with SIGKILL resumes in its checkpoint's
phase, bad schedules end in one ERROR line."""

import os
import re
import signal
import subprocess
import sys
import time

import pytest

from tests.conftest import REPO
from tests.helpers.checkpoints import ckpt_prefix
from tests.helpers.checkpoints import ENCODER_DIR

pytestmark = pytest.mark.process  # starts programs

SCHEDULE = "0:2,4:1,8:0"
# 2 layers: 16 variables each, 5 embeddings, 2 pooler, 2 classifier.
TRAINABLE = {2: 4, 1: 20, 0: 41}


def _data(tmp_path):
  words = ["the world was long", "it sat on it", "long was the world"]
  # ckpt_a holds a 3-class classifier head.
  rows = ["%s\t%s" % (("a", "b", "c")[i % 3], words[i % 3]) for i in range(64)]
  (tmp_path / "train.tsv").write_text("\n".join(rows) + "\n")
  return tmp_path


def _command(tmp_path, *extra):
  return [
    sys.executable,
    "run_classifier.py",
    "--task_name=tsv",
    "--label_column=0",
    "--text_a_column=1",
    "--labels=a,b,c",
    "--max_seq_length=8",
    "--do_train",
    "--vocab_file=%s" % (ENCODER_DIR / "vocab_small.txt"),
    "--bert_config_file=%s" % (ENCODER_DIR / "ckpt_a" / "bert_config.json"),
    "--init_checkpoint=%s" % ckpt_prefix("ckpt_a"),
    "--data_dir=%s" % _data(tmp_path),
    "--output_dir=%s" % (tmp_path / "out"),
    "--train_batch_size=2",
    "--num_train_epochs=1",
    "--save_checkpoints_steps=1",
    "--iterations_per_loop=1",
    "--noprogress",
  ] + list(extra)


def _env():
  return dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")


def _phases(log):
  """[(step, frozen layers, trainable variables)] logged."""
  return [
    tuple(int(x) for x in m)
    for m in re.findall(
      r"unfreeze phase from step (\d+): lowest (\d+) layers frozen, (\d+) "
      r"trainable variables",
      log,
    )
  ]


def _frozen_at(step):
  return [k for s, k in ((0, 2), (4, 1), (8, 0)) if s <= step][-1]


@pytest.mark.slow  # two training runs of 32 steps: ~1-2 min
def test_killed_run_resumes_in_its_checkpoints_phase(tmp_path):
  command = _command(tmp_path, "--unfreeze_schedule=" + SCHEDULE)
  first = subprocess.Popen(
    command,
    cwd=REPO,
    env=_env(),
    stdout=subprocess.DEVNULL,
    stderr=subprocess.PIPE,
    text=True,
  )
  deadline = time.time() + 300
  while not (tmp_path / "out" / "ckpt-6.index").exists():
    assert first.poll() is None and time.time() < deadline
    time.sleep(0.2)
  first.send_signal(signal.SIGKILL)
  log = first.communicate()[1]
  assert _phases(log)[:2] == [(0, 2, TRAINABLE[2]), (4, 1, TRAINABLE[1])]
  result = subprocess.run(
    command,
    cwd=REPO,
    env=_env(),
    capture_output=True,
    text=True,
    timeout=600,
    check=False,
  )
  assert result.returncode == 0, result.stderr[-3000:]
  resumed = int(
    re.search(
      r"Resuming from checkpoint \S+ at step (\d+)", result.stderr
    ).group(1)
  )
  # ckpt-6 may be cut short by the kill (then the newest intact one).
  assert 5 <= resumed < 32
  phases = _phases(result.stderr)
  assert phases[0] == (
    resumed,
    _frozen_at(resumed),
    TRAINABLE[_frozen_at(resumed)],
  )
  assert phases[-1] == (8, 0, TRAINABLE[0]) or resumed >= 8


@pytest.mark.parametrize(
  "extra, message",
  [
    (
      ["--unfreeze_schedule=0:2,x"],
      "ERROR: --unfreeze_schedule=0:2,x: 'x' is not STEP:FROZEN_LAYERS",
    ),
    (
      ["--unfreeze_schedule=0:3"],
      "ERROR: --unfreeze_schedule=0:3: 3 frozen layers from step 0, but the "
      "model has 2",
    ),
    (
      ["--unfreeze_schedule=0:1", "--num_frozen_layers=1"],
      "ERROR: --unfreeze_schedule and --num_frozen_layers: give one (the "
      "schedule's first phase is the frozen start)",
    ),
  ],
)
def test_bad_schedules_end_in_one_line(tmp_path, extra, message):
  result = subprocess.run(
    _command(tmp_path, *extra),
    cwd=REPO,
    env=_env(),
    capture_output=True,
    text=True,
    timeout=300,
    check=False,
  )
  assert result.returncode == 1
  assert result.stderr.strip().splitlines()[-1] == message
  assert not (tmp_path / "out" / "checkpoint").exists()
