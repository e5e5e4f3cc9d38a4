"""Concurrent runs and damaged checkpoints (issue classes 7 and 8).

A second run on a locked --output_dir fails at once with one line naming
the holder, for every training script; the lock dies with a kill -9'd
holder. A run whose latest checkpoint is damaged resumes from the newest
intact one and ends where an undamaged run ends; with no intact one it
stops with one line.
"""

import os
import shutil
import signal
import socket
import subprocess
import sys
import time

import pytest

from bert_tf.jobs.registry import TASKS
from tests.conftest import REPO
from tests.helpers.processes import run
from tests.helpers.scripts import CLASSIFIER_EVAL

_SCRIPTS = (
  "run_classifier.py",
  "run_squad.py",
  "run_pretraining.py",
  "run_ner.py",
  "run_multiple_choice.py",
)
# Holds the lock of argv[1] until killed.
_HOLDER = (
  "import sys, time; from bert_tf.io_utils import make_output_dir; "
  "make_output_dir(sys.argv[1]); print('locked', flush=True); "
  "time.sleep(600)"
)


def _one_error_line(stderr):
  errors = [line for line in stderr.splitlines() if line.startswith("ERROR:")]
  assert len(errors) == 1 and "Traceback" not in stderr, stderr[-3000:]
  return errors[0]


def _hold(folder):
  holder = subprocess.Popen(
    [sys.executable, "-c", _HOLDER, str(folder)],
    cwd=REPO,
    stdout=subprocess.PIPE,
    text=True,
  )
  assert holder.stdout.readline().strip() == "locked"
  return holder


@pytest.mark.process
def test_a_second_run_on_a_locked_output_dir_fails_naming_the_holder(
  tmp_path, flipped_data
):
  folder = tmp_path / "out"
  holder = _hold(folder)
  try:
    # The other scripts take the lock through the same call (next test).
    result = run(
      [
        "run_classifier.py",
        "--output_dir=%s" % folder,
        "--data_dir=%s" % flipped_data,
      ]
      + [
        a
        for a in CLASSIFIER_EVAL
        if not a.startswith(("--eval_every", "--best", "--early"))
      ]
    )
    assert result.returncode == 1
    line = _one_error_line(result.stderr)
    assert line == (
      "ERROR: --output_dir=%s is in use by pid %d on %s; "
      "wait for it to end or use another --output_dir"
      % (folder, holder.pid, socket.gethostname())
    )
    assert not list(folder.glob("ckpt-*")) and not list(
      folder.glob("*.tf_record")
    )
  finally:
    holder.send_signal(signal.SIGKILL)
    holder.wait()
  # kill -9 released it: the next run takes the lock and trains.
  result = run(
    [
      "run_classifier.py",
      "--output_dir=%s" % folder,
      "--data_dir=%s" % flipped_data,
      "--num_train_epochs=1",
    ]
    + [
      a
      for a in CLASSIFIER_EVAL
      if not a.startswith(("--eval_every", "--best", "--early", "--num_train"))
    ]
  )
  assert result.returncode == 0, result.stderr[-3000:]
  assert (folder / "ckpt-4.index").exists()


def test_every_training_script_locks_its_output_dir():
  # One call, where the output_dir is created (after the flag checks): in
  # the script's Job, or in the fine-tuning skeleton it runs through.
  skeleton = (REPO / "bert_tf" / "jobs" / "finetune.py").read_text()
  assert skeleton.count("make_output_dir(f.output_dir)") == 1
  jobs = {t.script: t.job for t in TASKS.values()}
  for script in _SCRIPTS:
    job = jobs[script].rsplit(".", 1)[0].replace(".", "/") + ".py"
    source = (REPO / job).read_text()
    calls = source.count("make_output_dir(self.config.output_dir)")
    assert calls == 1 or (calls == 0 and "finetune.Job" in source), script
    assert "gfile.makedirs(" not in source, script


def _damage(path):
  data = path.read_bytes()
  path.write_bytes(data[: len(data) // 2])


@pytest.mark.process
def test_resume_from_a_damaged_checkpoint(tmp_path, flipped_data):
  args = [
    "--data_dir=%s" % flipped_data,
    "--do_eval",
    "--eval_batch_size=8",
    "--save_checkpoints_steps=4",
    "--num_train_epochs=2",
  ] + [
    a
    for a in CLASSIFIER_EVAL
    if not a.startswith(
      ("--eval_every", "--best", "--early", "--num_train", "--save_checkpoints")
    )
  ]
  clean, damaged = tmp_path / "clean", tmp_path / "damaged"
  result = run(["run_classifier.py", "--output_dir=%s" % clean] + args)
  assert result.returncode == 0, result.stderr[-3000:]
  shutil.copytree(clean, damaged)  # --deterministic: as a second run
  # 32 examples * 2 epochs / batch 8 = 8 steps: ckpt-4 and ckpt-8. Damage the
  # latest and drop the results: the rerun must train steps 5-8 again from
  # ckpt-4.
  _damage(damaged / "ckpt-8.data-00000-of-00001")
  os.remove(damaged / "eval_results.txt")
  result = run(["run_classifier.py", "--output_dir=%s" % damaged] + args)
  assert result.returncode == 0, result.stderr[-3000:]
  assert "Checkpoint %s is unreadable" % (damaged / "ckpt-8") in result.stderr
  assert "Resuming from checkpoint %s" % (damaged / "ckpt-4") in result.stderr
  assert (damaged / "eval_results.txt").read_text() == (
    clean / "eval_results.txt"
  ).read_text()

  # Nothing intact: one line, nothing trained.
  for path in damaged.glob("ckpt-*.data-*"):
    _damage(path)
  start = time.time()
  result = run(["run_classifier.py", "--output_dir=%s" % damaged] + args)
  assert result.returncode == 1
  line = _one_error_line(result.stderr)
  assert line.startswith(
    "ERROR: %s: no intact checkpoint to resume from" % damaged
  ), line
  assert time.time() - start < 120
