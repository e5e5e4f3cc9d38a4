"""Evaluation during training through the scripts: run_classifier.py keeps
the best (not the last) checkpoint, stops early, survives kill -9,
and predicts with best/; run_squad.py's evaluations equal --do_predict's;
one-line errors for inconsistent flags.

The classifier data is built so that the best checkpoint comes early: dev
holds the training sentences with flipped labels, so the better the model
learns the training set, the worse its dev loss gets (after a plateau)."""

import json
import pathlib

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.checkpoints import checkpoint_io
from bert_tf.modeling.bert_config import BertConfig
from bert_tf.tasks import classification as classification_task
from bert_tf.tasks.classification import ClassifierModel
from bert_tf.training import input_pipeline
from tests.helpers.checkpoints import config_file
from tests.helpers.cli import run_mains
from tests.helpers.processes import finish
from tests.helpers.processes import kill_when
from tests.helpers.scripts import CLASSIFIER_EVAL
from tests.helpers.scripts import SQUAD
from tests.helpers.scripts import squad_slice
from tests.helpers.scripts import start_run

pytestmark = pytest.mark.process  # starts programs

CONFIG = pathlib.Path(config_file("ckpt_b"))


def _history(output_dir):
  return [
    json.loads(line)
    for line in (output_dir / "eval_history.jsonl").read_text().splitlines()
  ]


def _kill_after_evaluations(process, output_dir, count):
  history = output_dir / "eval_history.jsonl"
  kill_when(
    process,
    lambda: history.exists() and len(history.read_text().splitlines()) >= count,
    "evaluation",
  )


def _checkpoint_tensors(prefix):
  reader = tf.train.load_checkpoint(str(prefix))
  return {
    name: reader.get_tensor(name) for name in reader.get_variable_to_shape_map()
  }


def _eval_results(path):
  pairs = [line.split(" = ") for line in path.read_text().splitlines()]
  return {key: float(value) for key, value in pairs}


def test_classifier_best_early_stop_kill_and_predict(tmp_path, flipped_data):
  args = CLASSIFIER_EVAL + [
    "--data_dir=%s" % flipped_data,
    "--do_eval",
    "--do_predict",
    "--predict_checkpoint=best",
  ]
  full, killed = tmp_path / "full", tmp_path / "killed"
  full_run = start_run("run_classifier.py", full, *args)
  _kill_after_evaluations(
    start_run("run_classifier.py", killed, *args), killed, 2
  )
  _, stderr = finish(start_run("run_classifier.py", killed, *args))
  assert "Resuming from checkpoint" in stderr
  finish(full_run)

  history = _history(full)
  steps = [h["global_step"] for h in history]
  losses = [h["eval_loss"] for h in history]
  best_index = int(np.argmin(losses))
  best_step = steps[best_index]
  # Stopped 2 evaluations after the best one, before the planned 80 steps.
  assert steps == list(range(10, best_step + 30, 10)) and steps[-1] < 80
  assert best_step != steps[-1] and losses[-1] > losses[best_index]
  stop = json.loads((full / "early_stopping.json").read_text())
  assert stop["global_step"] == steps[-1]
  assert tf.train.latest_checkpoint(str(full)).endswith("ckpt-%d" % steps[-1])
  best = json.loads((full / "best" / "best.json").read_text())
  assert (best["global_step"], best["value"]) == (best_step, losses[best_index])
  assert best["metrics"] == {
    k: v for k, v in history[best_index].items() if k != "global_step"
  }
  best_tensors = _checkpoint_tensors(full / "best" / "bert_model.ckpt")
  assert best_tensors["global_step"] == best_step
  assert "output_weights" in best_tensors and "bert/pooler/dense/kernel" in (
    best_tensors
  )
  assert (full / "best" / "bert_config.json").read_text() == (
    CONFIG.read_text()
  )
  # TensorBoard eval scalars in output_dir/eval/.
  logged = {}
  for path in (full / "eval").glob("events.out.tfevents.*"):
    for event in tf.compat.v1.train.summary_iterator(str(path)):
      for value in event.summary.value:
        if value.tag == "eval_loss":
          logged[event.step] = float(tf.make_ndarray(value.tensor))
  assert logged == pytest.approx(dict(zip(steps, losses)))

  # kill -9 between evaluations, then the same command: same records.
  assert _history(killed) == history
  assert json.loads((killed / "best" / "best.json").read_text()) == best
  resumed = _checkpoint_tensors(killed / "best" / "bert_model.ckpt")
  for name, value in best_tensors.items():
    np.testing.assert_array_equal(resumed[name], value, err_msg=name)

  # --do_eval and --do_predict after training used best/.
  results = _eval_results(full / "eval_results.txt")
  assert results == pytest.approx(dict(history[best_index]), rel=1e-6)

  # test_results.tsv: the best checkpoint's own probabilities.
  config = BertConfig.from_json_file(str(CONFIG))
  model = ClassifierModel(config, 2)
  checkpoint_io.init_from_checkpoint(
    str(full / "best" / "bert_model.ckpt"), model.tf1_variables()
  )
  features = next(
    iter(
      input_pipeline.eval_dataset(
        [str(full / "predict.tf_record")],
        classification_task.feature_spec(16),
        100,
      )
    )
  )
  expected = model(features, training=False)["probabilities"].numpy()
  written = np.array(
    [
      [float(p) for p in line.split("\t")]
      for line in (full / "test_results.tsv").read_text().splitlines()
    ]
  )
  np.testing.assert_allclose(written, expected, atol=1e-6)


def test_squad_evaluations_equal_do_predict(tmp_path):
  files = {"v1": squad_slice(tmp_path, "small_v1_first_answer", 3)}
  # 80 questions, batch 8, 2 epochs: 20 steps, evaluated every 5.
  args = [
    "--do_train",
    "--do_predict",
    "--deterministic",
    "--train_file=%s" % files["v1"],
    "--predict_file=%s" % files["v1"],
    "--train_batch_size=8",
    "--num_train_epochs=2",
    "--learning_rate=2e-3",
    "--save_checkpoints_steps=0",
    "--predict_batch_size=16",
    "--eval_every_steps=5",
    "--best_metric=f1",
  ]
  out = tmp_path / "out"
  stdout, _ = finish(start_run("run_squad.py", out, *args))
  history = _history(out)
  assert [h["global_step"] for h in history] == [5, 10, 15, 20]
  final = json.loads((out / "eval_results.json").read_text())
  assert json.loads(stdout.splitlines()[-1]) == final
  assert history[-1] == dict(final, global_step=20)
  # A separate --do_predict from best/ scores what was recorded at its step.
  best = json.loads((out / "best" / "best.json").read_text())
  finish(
    start_run(
      "run_squad.py",
      out,
      "--do_predict",
      "--predict_file=%s" % files["v1"],
      "--predict_batch_size=16",
      "--predict_checkpoint=best",
    )
  )
  recorded = next(h for h in history if h["global_step"] == best["global_step"])
  assert recorded == dict(
    json.loads((out / "eval_results.json").read_text()),
    global_step=best["global_step"],
  )
  assert recorded["f1"] == max(h["f1"] for h in history)


def test_inconsistent_flags_are_one_line(tmp_path, flipped_data):
  base = [
    a
    for a in CLASSIFIER_EVAL
    if not a.startswith(("--eval_every", "--best_", "--early"))
  ]
  base += [
    "--data_dir=%s" % flipped_data,
    "--output_dir=%s" % (tmp_path / "out"),
  ]
  cases = {
    "no_train": (
      ["--nodo_train", "--do_eval", "--eval_every_steps=5"],
      "--eval_every_steps needs --do_train",
    ),
    "both": (
      ["--eval_every_steps=5", "--eval_every_epochs=1"],
      "give only one of --eval_every_steps and --eval_every_epochs",
    ),
    "zero": (
      ["--eval_every_steps=0"],
      "flag --eval_every_steps=0: must be >= 1",
    ),
    "best_alone": (
      ["--best_metric=eval_loss"],
      "--best_metric needs --eval_every_steps or --eval_every_epochs",
    ),
    "patience": (
      ["--eval_every_epochs=1", "--early_stopping_patience=2"],
      "--early_stopping_patience needs --best_metric",
    ),
    "metric": (
      ["--eval_every_steps=5", "--best_metric=eval_f1"],
      "--best_metric=eval_f1: not an evaluation metric "
      "(eval_accuracy, eval_loss, loss)",
    ),
    "no_best": (
      ["--nodo_train", "--do_eval", "--predict_checkpoint=best"],
      "--predict_checkpoint=best: %s holds no checkpoint"
      % (tmp_path / "out" / "best"),
    ),
  }
  outcomes, _ = run_mains(
    "run_classifier", [base + args for args, _ in cases.values()]
  )
  for (name, (_, message)), (code, stderr) in zip(cases.items(), outcomes):
    assert code == 1, (name, stderr)
    assert stderr.startswith("ERROR: " + message), (name, stderr)
    assert stderr.count("\n") == 1, (name, stderr)
  squad = SQUAD + [
    "--output_dir=%s" % (tmp_path / "squad"),
    "--do_train",
    "--eval_every_steps=5",
    "--train_file=%s" % squad_slice(tmp_path, "small_v1_first_answer", 1),
  ]
  outcomes, _ = run_mains("run_squad", [squad])
  assert outcomes[0] == (
    1,
    "ERROR: evaluation during training needs "
    "--predict_file (a dev set with answers)\n",
  )
