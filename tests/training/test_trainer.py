"""Trainer: resume, accumulation, predict/evaluate, summaries, precision."""

import logging

import keras
import numpy as np
import pytest
import tensorflow as tf
from tensorflow.python.framework import config as tf_config  # pylint: disable=g-direct-tensorflow-import

from bert_tf.io_utils import InputError
from bert_tf.training import distribution
from tests.helpers import tiny_task as support


@pytest.fixture
def deterministic():
  distribution.configure_runtime(seed=1, deterministic=True)
  yield
  tf_config.disable_op_determinism()  # No public inverse of enable.


def _flat(weights):
  return np.concatenate([w.ravel() for w in weights])


def test_resume_equals_uninterrupted_run(tmp_path, deterministic, caplog):
  kwargs = dict(dropout=0.1, shuffle=True, save_checkpoints_steps=2)
  keras.utils.set_random_seed(1)
  full, full_w, _ = support.train(tmp_path / "full", **kwargs)
  # "Killed" after the checkpoint at step 4, then the same command again.
  keras.utils.set_random_seed(1)
  first, _, _ = support.train(tmp_path / "resumed", steps=4, **kwargs)
  keras.utils.set_random_seed(1)
  calls = []
  caplog.set_level(logging.INFO)
  with caplog.at_level(logging.INFO, logger="absl"):
    rest, rest_w, trainer = support.train(
      tmp_path / "resumed", init_checkpoint_fn=calls.append, **kwargs
    )
  assert "Resuming from checkpoint" in caplog.text
  assert "at step 4" in caplog.text
  assert not calls  # init_checkpoint only initialises fresh runs.
  np.testing.assert_array_equal(first + rest, full)
  np.testing.assert_array_equal(_flat(rest_w), _flat(full_w))
  # A finished run is not trained again.
  assert trainer.train(support.dataset_fn(8), support.NUM_STEPS) == []
  again, again_w, _ = support.train(tmp_path / "resumed", **kwargs)
  assert again == [] and np.array_equal(_flat(again_w), _flat(full_w))
  kept = sorted(p.name for p in (tmp_path / "full").glob("ckpt-*.index"))
  assert kept == ["ckpt-2.index", "ckpt-4.index", "ckpt-6.index"]


def test_init_checkpoint_fn_runs_on_fresh_run(tmp_path):
  calls = []
  support.train(tmp_path, steps=1, init_checkpoint_fn=calls.append)
  assert len(calls) == 1 and isinstance(calls[0], keras.Model)


def test_gradient_accumulation_matches_full_batch(tmp_path):
  once, once_w, _ = support.train(tmp_path / "a", global_batch=8)
  twice, twice_w, _ = support.train(
    tmp_path / "b",
    global_batch=8,
    gradient_accumulation_steps=2,
    iterations_per_loop=4,
  )
  np.testing.assert_allclose(_flat(twice_w), _flat(once_w), atol=1e-5)
  # Per-loop means of the per-step losses agree too.
  np.testing.assert_allclose(twice[0], np.mean(once[:4]), atol=1e-5)
  with pytest.raises(InputError, match="gradient_accumulation_steps"):
    support.train(tmp_path / "c", global_batch=6, gradient_accumulation_steps=4)


def test_predict_and_evaluate_partial_batches(tmp_path):
  _, _, trainer = support.train(tmp_path, steps=2)
  rows = {k: v[:13] for k, v in support.examples().items()}
  dataset = tf.data.Dataset.from_tensor_slices(rows).batch(5)
  predictions = list(trainer.predict(dataset, 5, feature_keys=("y",)))
  expected = trainer.model(rows)["logits"].numpy()
  assert len(predictions) == 13
  np.testing.assert_allclose(
    np.stack([p["logits"] for p in predictions]), expected, atol=1e-6
  )
  assert [int(p["y"]) for p in predictions] == rows["y"].tolist()
  metrics = trainer.evaluate(dataset, 5)
  accuracy = np.mean(expected.argmax(-1) == rows["y"])
  assert metrics == {"accuracy": pytest.approx(accuracy), "global_step": 2}


def test_summaries_and_history(tmp_path):
  history = support.train(tmp_path, steps=3)[0]
  assert len(history) == 3
  scalars = {}
  for path in tmp_path.glob("events.out.tfevents.*"):
    for event in tf.compat.v1.train.summary_iterator(str(path)):
      for value in event.summary.value:
        scalars.setdefault(value.tag, {})[event.step] = float(
          tf.make_ndarray(value.tensor)
        )
  assert set(scalars) == {
    "loss",
    "learning_rate",
    "steps_per_sec",
    "examples_per_sec",
  }
  np.testing.assert_allclose(
    [scalars["loss"][s] for s in (1, 2, 3)], history, rtol=1e-6
  )
  # lr after step s is the rate of the next step: 0.05 * min(s/2, 1-s/6).
  np.testing.assert_allclose(
    [scalars["learning_rate"][s] for s in (1, 2, 3)],
    [0.025, 0.05 * (1 - 2 / 6), 0.05 * 0.5],
    rtol=1e-6,
  )


@pytest.mark.parametrize(
  "dtype,use_xla",
  [("mixed_float16", False), ("mixed_bfloat16", False), ("float32", True)],
)
def test_precision_and_xla_train(tmp_path, dtype, use_xla):
  distribution.configure_runtime(dtype=dtype)
  try:
    losses, weights, trainer = support.train(tmp_path, steps=2, use_xla=use_xla)
  finally:
    keras.mixed_precision.set_global_policy("float32")
  assert np.all(np.isfinite(losses)) and np.all(np.isfinite(_flat(weights)))
  is_scaled = isinstance(trainer.optimizer, keras.optimizers.LossScaleOptimizer)
  assert is_scaled == (dtype == "mixed_float16")
  assert trainer.global_step == 2
