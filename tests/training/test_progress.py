"""Live progress: host loops split into short calls change nothing but how
often the bar moves; a log line at least every N seconds without a tty."""

import logging

import numpy as np
import pytest

from bert_tf.training import progress
from tests.helpers import tiny_task as support


def test_pacer_times_one_step_after_tracing_then_grows_to_the_target():
  pacer = progress.HostLoopPacer(whole_loops=False, target_seconds=2.0)
  assert pacer.size(1000) == 1
  pacer.record(1, 30.0)  # Tracing: not a step time.
  assert pacer.size(1000) == 1
  sizes = []
  for _ in range(6):
    n = pacer.size(1000)
    pacer.record(n, 0.1 * n)  # 0.1 s a step: 20 steps make 2 s.
    sizes.append(pacer.size(1000))
  assert sizes == [2, 4, 8, 16, 20, 20]
  pacer.record(20, 8.0)  # Steps got slower: 0.4 s -> 5 steps.
  assert pacer.size(1000) == 5
  assert pacer.size(3) == 3  # Never past the loop's end.


def test_pacer_keeps_whole_loops_on_tpu_and_multi_worker():
  pacer = progress.HostLoopPacer(whole_loops=True)
  pacer.record(1000, 1.0)
  pacer.record(1000, 1.0)
  assert pacer.size(1000) == 1000


_PACER_INIT = progress.HostLoopPacer.__init__


def _train(path, one_step_calls, monkeypatch):
  # One call per loop is what the trainer does on TPU (and did everywhere).
  monkeypatch.setattr(
    progress.HostLoopPacer,
    "__init__",
    lambda self, whole_loops: _PACER_INIT(self, not one_step_calls, 1e-9),
  )
  return support.train(
    path, dropout=0.1, iterations_per_loop=3, save_checkpoints_steps=2
  )


def test_calls_of_one_step_train_the_same_model(tmp_path, monkeypatch):
  whole, whole_w, _ = _train(tmp_path / "whole", False, monkeypatch)
  split, split_w, trainer = _train(tmp_path / "split", True, monkeypatch)
  # Same loops (<= 3 steps, cut at the checkpoints every 2): to 2, 4, 6,
  # each run as 2 calls of 1 step.
  np.testing.assert_allclose(split, whole, rtol=1e-6)
  assert len(split) == 3
  for a, b in zip(split_w, whole_w):
    np.testing.assert_array_equal(a, b)
  assert sorted(p.name for p in (tmp_path / "split").glob("ckpt-*.index")) == [
    "ckpt-2.index",
    "ckpt-4.index",
    "ckpt-6.index",
  ]
  assert trainer.global_step == support.NUM_STEPS


def test_log_line_without_a_terminal(monkeypatch, caplog):
  now = [100.0]
  monkeypatch.setattr(progress.time, "time", lambda: now[0])
  caplog.set_level(logging.INFO)
  # Another test may have raised the absl logger's own level.
  caplog.set_level(logging.INFO, logger="absl")
  with progress.Progress(100, initial=10, desc="train") as bar:
    assert bar.bar.disable  # pytest's stderr is not a terminal.
    for now[0], n, loss, examples in [
      (101.0, 5, 0.9, 40),  # The traced first call: rates start here.
      (131.5, 25, 0.5, 200),  # 31.5 s without a line.
      (140.0, 10, 0.4, 80),
    ]:  # 8.5 s since the line.
      bar.update(n, loss=loss, examples=examples)
  lines = [
    r.getMessage() for r in caplog.records if r.pathname.endswith("progress.py")
  ]
  # 25 steps in 30.5 s after the first call: 60 to go take 73 s.
  assert lines == [
    "train: step 40/100, loss = 0.50000, 6.6 examples/s, ETA 0:01:13"
  ]


def test_disabled_progress_logs_nothing(caplog):
  caplog.set_level(logging.INFO)
  # Another test may have raised the absl logger's own level.
  caplog.set_level(logging.INFO, logger="absl")
  with progress.Progress(10, enabled=False, log_seconds=0) as bar:
    bar.update(1)
    bar.update(1)
  assert not [r for r in caplog.records if r.pathname.endswith("progress.py")]


@pytest.mark.parametrize("seconds, text", [(59, "0:00:59"), (3725, "1:02:05")])
def test_duration(seconds, text):
  assert progress._duration(seconds) == text  # pylint: disable=protected-access
