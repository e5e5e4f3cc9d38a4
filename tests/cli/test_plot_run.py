"""plot_run: what it reads from event files and eval_history.jsonl equals
what was written; the PNG is a real PNG; bad inputs end in one line."""

import json
import os
import struct
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
from tensorflow.core.framework import summary_pb2
from tensorflow.core.util import event_pb2

from bert_tf.cli import plot_run
from bert_tf.io_utils import InputError
from tests.conftest import REPO

_STEPS = list(range(5, 305, 5))  # 60 points: the loss gets smoothed.
_LOSS = [
  3.0 - 0.03125 * i + (0.25 if i % 3 == 0 else 0.0) for i in range(len(_STEPS))
]
_LR = [1e-4 * (1 - s / 300) for s in _STEPS]
_EVALS = [
  {"global_step": 100, "eval_accuracy": 0.5, "eval_loss": 1.25},
  {
    "global_step": 200,
    "eval_accuracy": 0.75,
    "eval_loss": 0.875,
    "eval_f1": 0.7,
    "checkpoint": "ckpt-2",
  },
  {
    "global_step": 300,
    "eval_accuracy": 0.8125,
    "eval_loss": 0.625,
    "eval_f1": 0.8,
  },
]


def _write_run(folder, evals=_EVALS):
  """Scalars written as the Trainer writes them + an eval_history.jsonl."""
  writer = tf.summary.create_file_writer(str(folder))
  with writer.as_default():
    for step, loss, lr in zip(_STEPS, _LOSS, _LR):
      for name, value in [
        ("loss", loss),
        ("learning_rate", lr),
        ("examples_per_sec", 32.0),
        ("steps_per_sec", 1.0),
      ]:
        tf.summary.write(name, tf.constant(value, tf.float32), step=step)
  writer.close()
  if evals is not None:
    (folder / "eval_history.jsonl").write_text(
      "".join(json.dumps(e) + "\n" for e in evals)
    )


def _f32(values):
  return [float(np.float32(v)) for v in values]


def test_extracted_data_equals_what_was_written(tmp_path):
  _write_run(tmp_path)
  run = plot_run.read_run(str(tmp_path))
  assert sorted(run.train) == [
    "examples_per_sec",
    "learning_rate",
    "loss",
    "steps_per_sec",
  ]
  assert run.train["loss"] == (_STEPS, _f32(_LOSS))
  assert run.train["learning_rate"] == (_STEPS, _f32(_LR))
  assert run.eval == {
    "eval_accuracy": ([100, 200, 300], [0.5, 0.75, 0.8125]),
    "eval_loss": ([100, 200, 300], [1.25, 0.875, 0.625]),
    "eval_f1": ([200, 300], [0.7, 0.8]),
  }
  titles = [title for title, _ in plot_run._panels(run)]
  assert titles == [
    "loss",
    "learning_rate",
    "examples_per_sec",
    "eval_accuracy",
    "eval_f1",
  ]


def test_estimator_events_and_a_resumed_run(tmp_path):
  # The original Estimator writes `simple_value`s; a second (newer) file
  # re-writing step 2 after a restart wins.
  for name, points in [
    ("events.out.tfevents.1000.host", [(1, 4.0), (2, 3.5)]),
    ("events.out.tfevents.2000.host", [(2, 3.0), (3, 2.5)]),
  ]:
    with tf.io.TFRecordWriter(str(tmp_path / name)) as writer:
      for step, loss in points:
        summary = summary_pb2.Summary(
          value=[summary_pb2.Summary.Value(tag="loss", simple_value=loss)]
        )
        writer.write(
          event_pb2.Event(step=step, summary=summary).SerializeToString()
        )
  assert plot_run.read_run(str(tmp_path)).train == {
    "loss": ([1, 2, 3], [4.0, 3.0, 2.5])
  }


def test_smooth_is_the_debiased_moving_average():
  # By hand, weight 0.5: 2; (0.25*2 + 0.5*4) / 0.75 = 10/3.
  np.testing.assert_allclose(plot_run.smooth([2.0, 4.0], 0.5), [2.0, 10 / 3])


def _png_size(path):
  with open(path, "rb") as f:
    header = f.read(24)
  assert header[:8] == b"\x89PNG\r\n\x1a\n" and header[12:16] == b"IHDR"
  return struct.unpack(">II", header[16:24])


@pytest.mark.process
def test_command_line_writes_a_png(tmp_path):
  run_dir = tmp_path / "run"
  run_dir.mkdir()
  _write_run(run_dir)
  (run_dir / "eval_history.jsonl").write_text(
    json.dumps(_EVALS[0]) + "\n\n" + "{broken\n"
  )
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
  command = [
    sys.executable,
    "-m",
    "bert_tf.plot_run",
    "--output_dir=%s" % run_dir,
  ]
  bad = subprocess.run(
    command,
    cwd=REPO,
    env=env,
    text=True,
    capture_output=True,
    timeout=120,
    check=False,
  )
  assert bad.returncode == 1
  # TensorFlow's C++ start-up lines come first; ours is the last, alone.
  assert bad.stderr.splitlines()[-1].startswith(
    "ERROR: %s line 3: not JSON" % (run_dir / "eval_history.jsonl")
  )
  assert [
    line for line in bad.stderr.splitlines() if line.startswith("ERROR:")
  ] == bad.stderr.splitlines()[-1:]
  assert "Traceback" not in bad.stderr
  assert not (run_dir / plot_run.DEFAULT_OUTPUT).exists()
  _write_run(run_dir)
  history = (run_dir / "eval_history.jsonl").read_bytes()
  clobber = subprocess.run(
    command + ["--output_file=%s" % (run_dir / "eval_history.jsonl")],
    cwd=REPO,
    env=env,
    text=True,
    capture_output=True,
    timeout=120,
    check=False,
  )
  assert clobber.returncode == 1
  assert clobber.stderr.splitlines()[-1] == (
    "ERROR: --output_file=%s exists and is not a .png: refusing to "
    "overwrite it" % (run_dir / "eval_history.jsonl")
  )
  assert (run_dir / "eval_history.jsonl").read_bytes() == history
  ok = subprocess.run(
    command + ["--output_file=%s" % (tmp_path / "x.png")],
    cwd=REPO,
    env=env,
    text=True,
    capture_output=True,
    timeout=120,
    check=False,
  )
  assert ok.returncode == 0, ok.stderr[-2000:]
  width, height = _png_size(tmp_path / "x.png")
  assert 1000 <= width <= 1600 and 600 <= height <= 1400, (width, height)


def test_default_output_file(tmp_path):
  _write_run(tmp_path, evals=None)
  run = plot_run.read_run(str(tmp_path))
  assert run.eval == {}
  path = str(tmp_path / plot_run.DEFAULT_OUTPUT)
  plot_run.plot_run(run, path, "run")
  assert _png_size(path)[0] > 0
  assert sorted(os.listdir(tmp_path))[-1] == plot_run.DEFAULT_OUTPUT


@pytest.mark.parametrize(
  "content, message",
  [
    ('{"eval_accuracy": 0.5}\n', "line 1: no integer global_step"),
    ('{"global_step": 1}\n[1]\n', "line 2: no integer global_step"),
    ('{"global_step": 1}\n{"global_step": 2,\n', "line 2: not JSON"),
  ],
)
def test_bad_eval_history_names_file_and_line(tmp_path, content, message):
  path = tmp_path / "eval_history.jsonl"
  path.write_text(content)
  with pytest.raises(InputError, match="eval_history.jsonl " + message):
    plot_run.read_run(str(tmp_path))


def test_no_event_files_and_corrupt_event_file(tmp_path):
  with pytest.raises(
    InputError, match="no scalars in TensorBoard event files"
  ) as e:
    plot_run.read_run(str(tmp_path))
  assert str(tmp_path) in str(e.value)
  with pytest.raises(InputError, match="no such folder"):
    plot_run.read_run(str(tmp_path / "missing"))
  _write_run(tmp_path, evals=None)
  (path,) = tmp_path.glob("events.out.tfevents.*")
  path.write_bytes(path.read_bytes()[:-7])
  with pytest.raises(InputError, match="corrupt or truncated event file") as e:
    plot_run.read_run(str(tmp_path))
  assert str(path) in str(e.value) and "\n" not in str(e.value)


def test_best_checkpoint_is_read_and_the_duplicate_eval_loss_hidden(tmp_path):
  evals = [dict(e, loss=e["eval_loss"]) for e in _EVALS]
  _write_run(tmp_path, evals)
  (tmp_path / "best").mkdir()
  best = {
    "metric": "eval_accuracy",
    "mode": "max",
    "value": 0.8125,
    "global_step": 300,
  }
  (tmp_path / "best" / "best.json").write_text(json.dumps(best))
  run = plot_run.read_run(str(tmp_path))
  assert run.best == best
  assert run.eval["loss"] == run.eval["eval_loss"]
  # The classifier's eval `loss` repeats eval_loss: no panel of its own.
  assert [title for title, _ in plot_run._panels(run)] == [
    "loss",
    "learning_rate",
    "examples_per_sec",
    "eval_accuracy",
    "eval_f1",
  ]
  path = tmp_path / "x.png"
  plot_run.plot_run(run, str(path), "with best")
  assert _png_size(path)[0] > 0
  (tmp_path / "best" / "best.json").write_text('{"metric": "eval_f1"}')
  with pytest.raises(InputError, match="best.json: not a best-checkpoint"):
    plot_run.read_run(str(tmp_path))
