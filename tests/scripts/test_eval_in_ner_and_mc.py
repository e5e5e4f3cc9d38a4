"""Evaluation during training in run_ner.py and run_multiple_choice.py:
eval_history.jsonl at the asked steps, best/ holding the recorded best
(re-evaluated through --predict_checkpoint=best it gives the recorded
metrics), early stopping; --spm_model_file in both scripts."""

import json

import pytest
import sentencepiece as spm
import tensorflow as tf

from tests.conftest import FIXTURES
from tests.helpers.processes import finish
from tests.helpers.scripts import MC_TRAIN
from tests.helpers.scripts import NER_TRAIN
from tests.helpers.scripts import start_run
from tests.helpers.sentencepiece_model import train_model

pytestmark = pytest.mark.process  # starts programs


def _history(output_dir):
  return [
    json.loads(line)
    for line in (output_dir / "eval_history.jsonl").read_text().splitlines()
  ]


def _results(path):
  return {
    key: float(value)
    for key, value in (
      line.split(" = ") for line in path.read_text().splitlines()
    )
  }


def _check_best(output_dir, metric, pick):
  """best/ is the history's best step; its re-evaluation (eval_results.txt
  of the --predict_checkpoint=best run) equals the recorded metrics."""
  history = _history(output_dir)
  best = pick(history, key=lambda h: h[metric])
  saved = json.loads((output_dir / "best" / "best.json").read_text())
  assert saved["global_step"] == best["global_step"]
  results = _results(output_dir / "eval_results.txt")
  assert results["global_step"] == best["global_step"]
  assert abs(results[metric] - best[metric]) < 1e-5
  return history


def test_ner_eval_every_steps_and_best_checkpoint(tmp_path):
  # 22 steps, an evaluation every 5 and at the end; best = lowest dev loss.
  process = start_run(
    "run_ner.py",
    tmp_path,
    *NER_TRAIN,
    "--eval_every_steps=5",
    "--best_metric=eval_loss",
    "--best_mode=min",
    "--predict_checkpoint=best",
  )
  finish(process)
  history = _check_best(tmp_path, "eval_loss", min)
  assert [h["global_step"] for h in history] == [5, 10, 15, 20, 22]
  assert {"eval_f1", "eval_precision", "eval_recall"} <= set(history[0])
  # The predictions of the best weights were written with them.
  assert (tmp_path / "test_predictions.txt").exists()


def test_multiple_choice_early_stopping_and_best_checkpoint(tmp_path):
  # The dev loss falls as the model learns, so with --best_mode=max it
  # stalls after the first evaluation: patience 2 ends training at the
  # third of 20 planned evaluations (200 steps).
  process = start_run(
    "run_multiple_choice.py",
    tmp_path,
    *MC_TRAIN,
    "--eval_every_steps=10",
    "--best_metric=eval_loss",
    "--best_mode=max",
    "--early_stopping_patience=2",
    "--predict_checkpoint=best",
  )
  finish(process)
  history = _check_best(tmp_path, "eval_loss", max)
  steps = [h["global_step"] for h in history]
  assert steps == [10, 20, 30]
  assert (
    history[0]["eval_loss"]
    > history[1]["eval_loss"]
    > (history[2]["eval_loss"])
  )
  assert tf.train.latest_checkpoint(str(tmp_path)).endswith("-30")
  assert "eval_accuracy" in history[0]


def test_sentencepiece_in_ner_and_multiple_choice(tmp_path):
  words = [
    line.split()[0]
    for name in ("train.txt", "test.txt")
    for line in (FIXTURES / "ner" / name).read_text().splitlines()
    if line.strip() and not line.startswith("-DOCSTART-")
  ]
  lines = [" ".join(words)]
  lines += (FIXTURES / "swag" / "train.csv").read_text().splitlines()
  model_file = train_model(tmp_path, lines, 300)
  sp = spm.SentencePieceProcessor(model_file=model_file)
  config = tmp_path / "config.json"
  settings = json.loads(
    (FIXTURES / "encoder" / "ckpt_b" / "bert_config.json").read_text()
  )
  settings["vocab_size"] = sp.GetPieceSize()
  config.write_text(json.dumps(settings))
  # A random-init model (--init_checkpoint= overrides the tests' ckpt).
  spm_args = [
    "--spm_model_file=%s" % model_file,
    "--vocab_file=",
    "--bert_config_file=%s" % config,
    "--init_checkpoint=",
    "--do_train",
    "--train_batch_size=4",
    "--num_train_epochs=1",
    "--save_checkpoints_steps=0",
  ]
  ner = start_run(
    "run_ner.py",
    tmp_path / "ner",
    "--data_dir=%s" % (FIXTURES / "ner"),
    "--do_predict",
    *spm_args,
  )
  mc = start_run(
    "run_multiple_choice.py",
    tmp_path / "mc",
    "--data_dir=%s" % (FIXTURES / "swag"),
    "--do_predict",
    *spm_args,
  )
  finish(ner)
  finish(mc)
  # The first training window starts with [CLS] and SentencePiece pieces.
  spec = {"input_ids": tf.io.FixedLenFeature([32], tf.int64)}
  record = tf.io.parse_single_example(
    next(
      iter(tf.data.TFRecordDataset(str(tmp_path / "ner" / "predict.tf_record")))
    ),
    spec,
  )
  ids = record["input_ids"].numpy().tolist()
  assert ids[0] == sp.PieceToId("[CLS]")
  first_word = "Anna"  # test.txt's first word
  assert ids[1 : 1 + len(sp.EncodeAsIds(first_word.lower()))] == (
    sp.EncodeAsIds(first_word.lower())
  )
  probabilities = [
    [float(p) for p in line.split("\t")]
    for line in (tmp_path / "mc" / "test_results.tsv").read_text().splitlines()
  ]
  assert probabilities and all(abs(sum(p) - 1) < 1e-5 for p in probabilities)
