"""run_squad.py end to end on the original tiny SQuAD checkpoint (fixtures/
encoder/ckpt_b: 1 layer, H=32, cls/squad head, Adam slots, written by the
original code): train + predict files, kill -9 and resume, predict-only
loading of --init_checkpoint, one-line flag errors; and SquadModel against
the original's golden logits (the span loss: tests/tasks/test_squad.py)."""

import json
import random

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.checkpoints import checkpoint_io
from bert_tf.tasks import squad as squad_task
from bert_tf.tasks.squad import SquadModel
from bert_tf.tokenizers import tokenization
from bert_tf.training import input_pipeline
from data_prep.squad import postprocess as squad_postprocess
from data_prep.squad import raw_results
from data_prep.squad.example import read_squad_examples
from data_prep.squad.records import read_features_sidecar
from tests.helpers.checkpoints import CKPT
from tests.helpers.checkpoints import ENCODER_DIR
from tests.helpers.checkpoints import load_golden
from tests.helpers.checkpoints import VOCAB
from tests.helpers.cli import run_mains
from tests.helpers.processes import finish
from tests.helpers.processes import kill_after_first_checkpoint
from tests.helpers.scripts import SQUAD
from tests.helpers.scripts import squad_slice
from tests.helpers.scripts import start_run

# 3 paragraphs, 80 questions: 80 / 4 * 10 = 200 steps.
TRAIN_ARGS = [
  "--do_train",
  "--do_predict",
  "--deterministic",
  "--train_batch_size=4",
  "--num_train_epochs=10",
  "--learning_rate=1e-3",
  "--save_checkpoints_steps=5",
  "--iterations_per_loop=5",
  "--predict_batch_size=16",
]
NUM_STEPS = 200

ORIGINAL_DEFAULTS = {
  "bert_config_file": None,
  "vocab_file": None,
  "output_dir": None,
  "train_file": None,
  "predict_file": None,
  "init_checkpoint": None,
  "do_lower_case": True,
  "max_seq_length": 384,
  "doc_stride": 128,
  "max_query_length": 64,
  "do_train": False,
  "do_predict": False,
  "train_batch_size": 32,
  "predict_batch_size": 8,
  "learning_rate": 5e-5,
  "num_train_epochs": 3.0,
  "warmup_proportion": 0.1,
  "save_checkpoints_steps": 1000,
  "iterations_per_loop": 1000,
  "n_best_size": 20,
  "max_answer_length": 30,
  "use_tpu": False,
  "tpu_name": None,
  "tpu_zone": None,
  "gcp_project": None,
  "master": None,
  "num_tpu_cores": 8,
  "verbose_logging": False,
  "version_2_with_negative": False,
  "null_score_diff_threshold": 0.0,
}


@pytest.fixture(scope="module")
def squad_files(tmp_path_factory):
  tmp = tmp_path_factory.mktemp("squad_run_data")
  return {
    "v1": squad_slice(tmp, "small_v1_first_answer", 3),
    "v2": squad_slice(tmp, "small_v2", 2),
  }


def _start(output_dir, *args):
  return start_run("run_squad.py", output_dir, *args)


def _trained_variables(output_dir):
  reader = tf.train.load_checkpoint(str(output_dir / ("ckpt-%d" % NUM_STEPS)))
  names = [
    n
    for n in reader.get_variable_to_shape_map()
    if n.startswith(("model/", "optimizer/"))
  ]
  return {n: reader.get_tensor(n) for n in names}


def _check_outputs(output_dir, examples, max_nbest=20):
  """The predict files' keys and shapes; -> (raw, features, predictions)."""
  qas_ids = [e.qas_id for e in examples]
  predictions = json.loads((output_dir / "predictions.json").read_text())
  assert list(predictions) == qas_ids
  nbest = json.loads((output_dir / "nbest_predictions.json").read_text())
  assert list(nbest) == qas_ids
  for entries in nbest.values():
    assert 1 <= len(entries) <= max_nbest
    assert all(
      list(e) == ["text", "probability", "start_logit", "end_logit"]
      for e in entries
    )
  raw = raw_results.read_raw_results(str(output_dir / "raw_results.jsonl"), 64)
  _, features = read_features_sidecar(
    str(output_dir / "eval.tf_record.features.jsonl")
  )
  assert [r.unique_id for r in raw] == [f.unique_id for f in features]
  assert raw[0].unique_id == 1000000000
  return raw, features, predictions


@pytest.mark.process
def test_train_predict_kill_and_resume(tmp_path, squad_files):
  args = TRAIN_ARGS + [
    "--train_file=%s" % squad_files["v1"],
    "--predict_file=%s" % squad_files["v1"],
  ]
  # The uninterrupted run and the one to kill share the 2 cores.
  full, killed = tmp_path / "full", tmp_path / "killed"
  full_run = _start(full, *args)
  killed_at = kill_after_first_checkpoint(_start(killed, *args), killed)
  assert killed_at and not killed_at.endswith("ckpt-%d" % NUM_STEPS)
  assert not (killed / "predictions.json").exists()
  stdout, stderr = finish(_start(killed, *args))
  assert "Resuming from checkpoint %s" % killed_at in stderr
  assert "Num steps = %d" % NUM_STEPS in stderr
  full_stdout, _ = finish(full_run)

  expected = _trained_variables(full)
  resumed = _trained_variables(killed)
  assert sorted(resumed) == sorted(expected) and len(expected) > 20
  for name, value in expected.items():
    np.testing.assert_array_equal(resumed[name], value, err_msg=name)
  for name in (
    "raw_results.jsonl",
    "predictions.json",
    "nbest_predictions.json",
    "eval_results.json",
  ):
    assert (killed / name).read_bytes() == (full / name).read_bytes(), name

  examples = read_squad_examples(squad_files["v1"], False)
  raw, features, predictions = _check_outputs(full, examples)
  assert not (full / "null_odds.json").exists()
  metrics = json.loads((full / "eval_results.json").read_text())
  assert sorted(metrics) == ["exact_match", "f1"]
  assert json.loads(full_stdout.splitlines()[-1]) == metrics
  rescored = squad_postprocess.compute_predictions(
    examples, features, raw, 20, 30, True
  )
  assert rescored.predictions == predictions

  # train.tf_record holds the examples shuffled by random.Random(12345).
  train_examples = read_squad_examples(squad_files["v1"], True)
  random.Random(12345).shuffle(train_examples)
  tokenizer = tokenization.FullTokenizer(VOCAB, do_lower_case=True)
  query = tokenizer.tokenize(train_examples[0].question_text)[:16]
  record = next(iter(tf.data.TFRecordDataset(str(full / "train.tf_record"))))
  input_ids = (
    tf.train.Example.FromString(record.numpy())
    .features.feature["input_ids"]
    .int64_list.value
  )
  assert list(input_ids[1 : 1 + len(query)]) == (
    tokenizer.convert_tokens_to_ids(query)
  )


@pytest.mark.process
def test_predict_only_loads_init_checkpoint_v2(tmp_path, squad_files):
  finish(
    _start(
      tmp_path,
      "--do_predict",
      "--version_2_with_negative",
      "--predict_file=%s" % squad_files["v2"],
      "--predict_batch_size=7",
    )
  )
  assert not list(tmp_path.glob("ckpt-*"))  # Predict-only trains nothing.
  examples = read_squad_examples(squad_files["v2"], False, True)
  # v2 may add the null entry to the 20 best.
  raw, _, predictions = _check_outputs(tmp_path, examples, 21)
  null_odds = json.loads((tmp_path / "null_odds.json").read_text())
  assert list(null_odds) == list(predictions)
  for qas_id, score_diff in null_odds.items():
    assert (predictions[qas_id] == "") == (score_diff > 0.0)
  metrics = json.loads((tmp_path / "eval_results.json").read_text())
  for key in (
    "exact",
    "f1",
    "total",
    "HasAns_exact",
    "NoAns_exact",
    "best_exact",
    "best_exact_thresh",
    "best_f1",
    "best_f1_thresh",
  ):
    assert key in metrics, key
  assert metrics["total"] == len(examples)

  # The logits are ckpt_b's (encoder and cls/squad head) on eval.tf_record.
  config, encoder, heads, _ = load_golden("ckpt_b")
  specs = squad_task.feature_spec(64, False)
  dataset = input_pipeline.eval_dataset(
    [str(tmp_path / "eval.tf_record")], specs, 1000
  )
  features = next(iter(dataset))
  del config, features["unique_ids"]
  sequence = encoder(features, training=False)["sequence_output"]
  start, end = heads["squad"](sequence)
  assert len(raw) == start.shape[0]
  np.testing.assert_allclose([r.start_logits for r in raw], start, atol=1e-5)
  np.testing.assert_allclose([r.end_logits for r in raw], end, atol=1e-5)


def test_squad_model_matches_original_logits():
  config, _, _, _ = load_golden("ckpt_b")
  model = SquadModel(config)
  report = checkpoint_io.init_from_checkpoint(CKPT, model.tf1_variables())
  assert not report.not_in_checkpoint
  inputs = dict(np.load(ENCODER_DIR / "inputs.npz"))
  expected = np.load(ENCODER_DIR / "expected_b.npz")
  outputs = model(inputs, training=False)
  np.testing.assert_allclose(
    outputs["start_logits"], expected["squad_start_logits"], rtol=0, atol=1e-5
  )
  np.testing.assert_allclose(
    outputs["end_logits"], expected["squad_end_logits"], rtol=0, atol=1e-5
  )


@pytest.mark.process
def test_bad_flags_and_files_are_one_line(tmp_path, squad_files):
  bad_json = tmp_path / "bad.json"
  bad_json.write_text("{")
  two_answers = squad_slice(tmp_path, "small_v1", 1)
  train = "--train_file=%s" % squad_files["v1"]
  cases = {
    "no_do": ([], "At least one of `do_train`, `do_predict` must be True."),
    "train_file": (
      ["--do_train"],
      "If `do_train` is True, then `train_file` must be specified.",
    ),
    "predict_file": (
      ["--do_predict"],
      "If `do_predict` is True, then `predict_file` must be specified.",
    ),
    "missing": (
      ["--do_predict", "--predict_file=/no/such.json"],
      "--predict_file=/no/such.json: no such file",
    ),
    "seq": (
      ["--do_train", train, "--max_seq_length=600"],
      "max_seq_length 600 is longer than the model's "
      "max_position_embeddings 512",
    ),
    "query": (
      ["--do_train", train, "--max_query_length=61"],
      "The max_seq_length (64) must be greater than max_query_length (61) + 3",
    ),
    "case": (
      [
        "--do_train",
        train,
        "--nodo_lower_case",
        "--init_checkpoint=/m/uncased_L-12_H-768_A-12/bert_model.ckpt",
      ],
      "You passed in `--do_lower_case=False` with "
      "`--init_checkpoint=/m/uncased_L-12_H-768_A-12/bert_model.ckpt`.",
    ),
    "json": (
      ["--do_predict", "--predict_file=%s" % bad_json],
      "%s: not valid JSON" % bad_json,
    ),
    "answers": (
      ["--do_train", "--train_file=%s" % two_answers],
      "%s question 56be4db0acb8001400a502ec: for training, each "
      "question should have exactly 1 answer (found 3)" % two_answers,
    ),
  }
  out = tmp_path / "out"
  argvs = [
    SQUAD + ["--output_dir=%s" % out] + args for args, _ in cases.values()
  ]
  outcomes, defaults = run_mains("run_squad", argvs)
  for (name, (_, message)), (code, stderr) in zip(cases.items(), outcomes):
    assert code == 1, (name, stderr)
    assert stderr.startswith("ERROR: " + message), (name, stderr)
    assert stderr.count("\n") == 1, (name, stderr)
  assert not out.exists()
  assert {k: defaults[k] for k in ORIGINAL_DEFAULTS} == ORIGINAL_DEFAULTS
