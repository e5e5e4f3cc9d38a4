"""SquadTask and the span loss against hand-derived values: the original
`run_squad.model_fn` loss is the mean of the start and end losses, each the
batch mean of -log softmax(logits)[position] (the one-hot sum)."""

import math

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.tasks.squad import span_loss
from bert_tf.tasks.squad import SquadTask
from tests.helpers.checkpoints import config_of


def _loss(start, end, start_positions, end_positions):
  return float(
    span_loss(
      {
        "start_positions": tf.constant(start_positions),
        "end_positions": tf.constant(end_positions),
      },
      {
        "start_logits": tf.constant(start, tf.float32),
        "end_logits": tf.constant(end, tf.float32),
      },
    )
  )


def test_zero_logits_give_log_sequence_length():
  assert _loss(
    np.zeros((3, 5)), np.zeros((3, 5)), [0, 2, 4], [1, 3, 4]
  ) == pytest.approx(math.log(5), rel=1e-6)


def test_hand_derived_two_row_batch():
  # softmax([0, ln 3]) = [1/4, 3/4]: -log p = ln(4/3) at 1, ln 4 at 0.
  start = [[0.0, math.log(3.0)], [0.0, math.log(3.0)]]
  end = [[0.0, 0.0], [0.0, 0.0]]  # ln 2 wherever the answer ends
  expected = ((math.log(4 / 3) + math.log(4)) / 2 + math.log(2)) / 2
  assert _loss(start, end, [1, 0], [0, 1]) == pytest.approx(expected, rel=1e-6)


def test_a_sure_answer_costs_nothing_and_a_wrong_one_costs_its_margin():
  sure = [[0.0, 0.0, 50.0]]
  assert _loss(sure, sure, [2], [2]) == pytest.approx(0.0, abs=1e-6)
  # Wrong start (margin 50, ln(1 + 2e-50) ~ 0 aside), right end.
  assert _loss(sure, sure, [0], [2]) == pytest.approx(25.0, rel=1e-5)


def test_span_loss_is_mean_of_start_and_end_cross_entropy():
  rng = np.random.RandomState(0)
  start = rng.normal(size=(2, 5)).astype(np.float32)
  end = rng.normal(size=(2, 5)).astype(np.float32)

  def nll(logits, index):
    return np.log(np.sum(np.exp(logits))) - logits[index]

  expected = (
    (nll(start[0], 1) + nll(start[1], 0)) / 2
    + (nll(end[0], 3) + nll(end[1], 4)) / 2
  ) / 2
  assert _loss(start, end, np.array([1, 0]), np.array([3, 4])) == pytest.approx(
    expected, rel=1e-6
  )


def test_squad_task_scores_its_model_with_the_span_loss():
  config = config_of("ckpt_b")
  task = SquadTask(config, 8)
  assert set(task.feature_spec(True)) >= {"start_positions", "end_positions"}
  assert "start_positions" not in task.feature_spec(False)
  assert set(task.predict_keys) <= set(task.feature_spec(False))
  model = task.build_model()
  rng = np.random.RandomState(0)
  features = {
    "input_ids": rng.randint(1, config.vocab_size, (2, 8)),
    "input_mask": np.ones((2, 8), np.int32),
    "segment_ids": np.zeros((2, 8), np.int32),
    "start_positions": np.array([1, 6]),
    "end_positions": np.array([2, 7]),
  }
  outputs = model(features, training=False)
  assert outputs["start_logits"].shape == (2, 8)
  assert float(task.loss(features, outputs)) == pytest.approx(
    _loss(outputs["start_logits"], outputs["end_logits"], [1, 6], [2, 7]),
    rel=1e-6,
  )
