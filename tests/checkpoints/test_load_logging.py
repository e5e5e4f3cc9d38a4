"""Checkpoint loading logs one summary line; every name at --verbosity=1."""

import logging

from absl import logging as absl_logging
import keras
import numpy as np
import pytest

from bert_tf.checkpoints import checkpoint_io

NAME_MAP_SHAPES = {"bert/a": [2], "bert/b": [3], "output_bias": [2]}
CHECKPOINT_SHAPES = {
  "bert/a": [2],
  "bert/b": [3],
  "cls/x": [1],
  "bert/a/adam_m": [2],
  "bert/a/adam_v": [2],
  "global_step": [],
}


def load(caplog, verbosity):
  name_map = {
    name: keras.Variable(np.zeros(shape, np.float32))
    for name, shape in NAME_MAP_SHAPES.items()
  }
  old = absl_logging.get_verbosity()
  absl_logging.set_verbosity(verbosity)
  caplog.set_level(logging.DEBUG)
  try:
    report = checkpoint_io.assign_arrays(
      name_map,
      CHECKPOINT_SHAPES,
      lambda name: np.ones(CHECKPOINT_SHAPES[name]),
      "ckpt",
    )
  finally:
    absl_logging.set_verbosity(old)
  ours = [
    r.getMessage()
    for r in caplog.records
    if r.pathname.endswith("checkpoint_io.py")
  ]
  return report, name_map, ours


def test_one_line_by_default(caplog):
  report, name_map, lines = load(caplog, absl_logging.INFO)
  assert lines == [
    "loaded 2 variables from ckpt; 1 not in it keep their initializer "
    "(output_bias); 1 checkpoint-only ignored (cls/x); 3 optimizer-state "
    "ignored (Adam slots, global_step)"
  ]
  assert report.loaded == ["bert/a", "bert/b"]
  assert name_map["bert/b"].numpy().tolist() == [1, 1, 1]
  assert name_map["output_bias"].numpy().tolist() == [0, 0]


def test_every_name_at_verbosity_1(caplog):
  _, _, lines = load(caplog, absl_logging.DEBUG)
  assert lines[:4] == [
    "loaded bert/a [2] from ckpt",
    "loaded bert/b [3] from ckpt",
    "not in checkpoint, keeps its initializer: output_bias",
    "checkpoint-only, ignored: cls/x",
  ]
  assert len(lines) == 5


@pytest.mark.parametrize(
  "count, shown", [(3, "n0, n1, n2"), (4, "n0, n1, n2, ...")]
)
def test_summary_names_a_few(count, shown):
  report = checkpoint_io.LoadReport(
    [], ["n%d" % i for i in range(count)], [], []
  )
  assert checkpoint_io.load_summary(report, "c") == (
    "loaded 0 variables from c; %d not in it keep their initializer (%s)"
    % (count, shown)
  )
