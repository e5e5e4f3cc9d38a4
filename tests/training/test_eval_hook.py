"""EvalHook inside Trainer.train: history, TensorBoard, best/, early stopping
and resume after a crash at each point (the tiny engine model)."""

import json

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.checkpoints import checkpoint_io
from bert_tf.io_utils import InputError
from bert_tf.training.eval_hook import EvalHook
from bert_tf.training.trainer import Trainer
from tests.helpers import tiny_task as support

# A scripted "score" per step: best at step 2 (step 4 only ties it).
SCORES = {1: 0.2, 2: 0.5, 3: 0.4, 4: 0.5, 5: 0.3, 6: 0.1}


def _names(model):
  return {v.path: v for v in model.trainable_variables}


def _save(prefix, model, step):
  checkpoint_io.save_tf1_checkpoint(prefix, _names(model), step)


class _Recorder:
  """eval_fn: the real accuracy of the in-memory weights + the scripted
  score; remembers the weights it saw at each step."""

  def __init__(self, fail_at=None):
    self.weights = {}
    self.fail_at = fail_at

  def __call__(self, trainer):
    step = trainer.global_step
    if step == self.fail_at:
      raise KeyboardInterrupt("killed")
    self.weights[step] = {
      n: v.numpy() for n, v in _names(trainer.model).items()
    }
    rows = tf.data.Dataset.from_tensor_slices(support.examples()).batch(16)
    accuracy = trainer.evaluate(rows, 16)["accuracy"]
    return {
      "score": SCORES[step],
      "accuracy": accuracy,
      "global_step": -1,
    }  # ignored: the hook records the real step


def _train(output_dir, eval_fn, steps=support.NUM_STEPS, **hook_kwargs):
  hook_kwargs.setdefault("best_metric", "score")
  hook = EvalHook(eval_fn, output_dir, 1, save_fn=_save, **hook_kwargs)
  trainer = Trainer(
    support.TinyTask(),
    support.optimizer_fn,
    output_dir,
    progress=False,
    iterations_per_loop=1,
    save_checkpoints_steps=0,
  )
  return trainer, trainer.train(support.dataset_fn(8), steps, eval_hook=hook)


def _history(output_dir):
  lines = (output_dir / "eval_history.jsonl").read_text().splitlines()
  return [json.loads(line) for line in lines]


def _event_scalars(folder):
  values = {}
  for path in folder.glob("events.out.tfevents.*"):
    for event in tf.compat.v1.train.summary_iterator(str(path)):
      for value in event.summary.value:
        values.setdefault(value.tag, {})[event.step] = float(
          tf.make_ndarray(value.tensor)
        )
  return values


def test_records_best_and_early_stopping(tmp_path):
  recorder = _Recorder()
  trainer, stats = _train(tmp_path, recorder, patience=3)
  # Steps 3, 4 (a tie), 5 do not beat step 2: stop after step 5.
  assert [s["step"] for s in stats] == [1, 2, 3, 4, 5]
  history = _history(tmp_path)
  assert [h["global_step"] for h in history] == [1, 2, 3, 4, 5]
  assert [h["score"] for h in history] == [SCORES[s] for s in range(1, 6)]
  stop = json.loads((tmp_path / "early_stopping.json").read_text())
  assert stop["global_step"] == 5 and stop["best"]["global_step"] == 2
  assert tf.train.latest_checkpoint(str(tmp_path)).endswith("ckpt-5")

  # The eval saw the trained weights of each step (not a restored state).
  rows = support.examples()
  for step in (1, 5):
    w = recorder.weights[step]
    hidden = _layer_norm(
      np.tanh(rows["x"] @ w["tiny/dense/kernel"] + w["tiny/dense/bias"]), w
    )
    logits = hidden @ w["tiny/output/kernel"] + w["tiny/output/bias"]
    accuracy = np.mean(logits.argmax(-1) == rows["y"])
    assert history[step - 1]["accuracy"] == pytest.approx(accuracy)

  # best/ holds step 2's weights, its config-free files and best.json.
  best = tmp_path / "best"
  assert sorted(p.name for p in best.iterdir()) == [
    "bert_model.ckpt.data-00000-of-00001",
    "bert_model.ckpt.index",
    "best.json",
    "checkpoint",
  ]
  reader = tf.train.load_checkpoint(str(best / "bert_model.ckpt"))
  assert reader.get_tensor("global_step") == 2
  for name, value in recorder.weights[2].items():
    np.testing.assert_array_equal(reader.get_tensor(name), value)
  assert not np.array_equal(
    recorder.weights[2]["tiny/output/kernel"],
    recorder.weights[5]["tiny/output/kernel"],
  )
  assert json.loads((best / "best.json").read_text())["value"] == 0.5

  # TensorBoard: the same numbers in output_dir/eval/.
  scalars = _event_scalars(tmp_path / "eval")
  assert scalars["score"] == pytest.approx({s: SCORES[s] for s in range(1, 6)})
  assert set(scalars) == {"score", "accuracy"}

  # The stop is for good: the same command trains and evaluates no more.
  again = _Recorder()
  _, stats = _train(tmp_path, again, patience=3)
  assert stats == [] and not again.weights
  assert len(_history(tmp_path)) == 5


def _layer_norm(x, weights):
  mean = x.mean(-1, keepdims=True)
  var = x.var(-1, keepdims=True)
  return (x - mean) / np.sqrt(var + 1e-12) * weights[
    "tiny/LayerNorm/gamma"
  ] + weights["tiny/LayerNorm/beta"]


def test_kill_before_the_record_reruns_that_evaluation(tmp_path):
  _train(tmp_path / "full", _Recorder())
  # "Killed" after the checkpoint of step 3, before its evaluation ended.
  with pytest.raises(KeyboardInterrupt):
    _train(tmp_path / "killed", _Recorder(fail_at=3))
  assert [h["global_step"] for h in _history(tmp_path / "killed")] == [1, 2]
  # ... and while best/ was being swapped: only best.old/ is left.
  (tmp_path / "killed" / "best").rename(tmp_path / "killed" / "best.old")
  resumed = _Recorder()
  _train(tmp_path / "killed", resumed)
  assert sorted(resumed.weights) == [3, 4, 5, 6]  # step 3 evaluated again
  assert _history(tmp_path / "killed") == _history(tmp_path / "full")
  for name in (
    "best/best.json",
    "best/bert_model.ckpt.index",
    "best/bert_model.ckpt.data-00000-of-00001",
  ):
    assert (tmp_path / "killed" / name).read_bytes() == (
      tmp_path / "full" / name
    ).read_bytes(), name
  assert not (tmp_path / "killed" / "best.old").exists()


def test_history_after_the_restored_step_is_dropped(tmp_path):
  _train(tmp_path, _Recorder(), steps=2)
  with open(tmp_path / "eval_history.jsonl", "a") as f:
    f.write(json.dumps({"global_step": 5, "score": 9.0}) + "\n")
  _train(tmp_path, _Recorder(), steps=3)
  assert [h["global_step"] for h in _history(tmp_path)] == [1, 2, 3]


def test_min_mode_and_metric_checks(tmp_path):
  _train(tmp_path, _Recorder(), best_mode="min")
  best = json.loads((tmp_path / "best" / "best.json").read_text())
  assert (best["global_step"], best["value"]) == (6, 0.1)
  with pytest.raises(
    InputError,
    match="--best_metric=f1: not an evaluation metric \\(accuracy, score\\)",
  ):
    EvalHook(
      None,
      tmp_path,
      1,
      best_metric="f1",
      save_fn=_save,
      metric_names=["score", "accuracy"],
    )
  with pytest.raises(InputError, match="--best_metric=f1: not an evaluation"):
    _train(tmp_path / "other", _Recorder(), best_metric="f1")
  with pytest.raises(InputError, match="needs --best_metric"):
    EvalHook(None, tmp_path, 1, patience=2)


def test_use_loaded_weights_predicts_with_them(tmp_path):
  trainer, _ = _train(tmp_path, _Recorder())
  fresh = Trainer(
    support.TinyTask(), support.optimizer_fn, tmp_path, progress=False
  )
  loaded = checkpoint_io.init_from_checkpoint(
    str(tmp_path / "best" / "bert_model.ckpt"), _names(fresh.model)
  )
  assert not loaded.not_in_checkpoint
  fresh.use_loaded_weights(2)
  rows = tf.data.Dataset.from_tensor_slices(support.examples()).batch(16)
  assert fresh.evaluate(rows, 16)["global_step"] == 2
  # Not the latest checkpoint (step 6) of output_dir, which differs.
  best_logits = np.concatenate(
    [r["logits"][None] for r in fresh.predict(rows, 16)]
  )
  latest_logits = np.concatenate(
    [r["logits"][None] for r in trainer.predict(rows, 16)]
  )
  assert not np.allclose(best_logits, latest_logits)
