"""The SQuAD CLIs end to end, and one-line errors on malformed input."""

import json
import os
import random
import subprocess
import sys

import pytest
import tensorflow as tf

from bert_tf.records.task_schemas import squad_schema
from data_prep.squad import records as squad_records
from data_prep.squad.raw_results import write_raw_results
from tests.helpers.squad_golden import examples_and_features
from tests.helpers.squad_golden import golden_bytes
from tests.helpers.squad_golden import golden_jsonl
from tests.helpers.squad_golden import input_path
from tests.helpers.squad_golden import random_results
from tests.helpers.squad_golden import REPO
from tests.helpers.squad_golden import SQUAD
from tests.helpers.squad_golden import VOCAB

pytestmark = pytest.mark.process  # starts programs


def _run(module, **flags):
  args = [sys.executable, "-m", module] + [
    "--%s=%s" % (k, v) for k, v in flags.items()
  ]
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
  return subprocess.run(
    args, cwd=REPO, env=env, capture_output=True, text=True, timeout=300
  )


def test_squad_cli_train_shuffled(tmp_path):
  out = tmp_path / "train.tf_record"
  proc = _run(
    "data_prep.squad",
    input_file=input_path("small_v1_first_answer"),
    output_file=out,
    vocab_file=VOCAB,
    max_seq_length=128,
    doc_stride=64,
    max_query_length=32,
    is_training=True,
    num_workers=2,
  )
  assert proc.returncode == 0, proc.stderr
  assert "examples: 1057, features: 2177, skipped answers: 0" in proc.stdout
  assert os.listdir(tmp_path) == ["train.tf_record"]  # no sidecar for training
  spec = squad_schema(128, True).parse_spec()
  first = tf.io.parse_single_example(
    next(iter(tf.data.TFRecordDataset(str(out)))), spec
  )
  # The original shuffles the examples with random.Random(12345) first.
  examples, features = examples_and_features("features_v1_train_128_64_32")
  order = list(range(len(examples)))
  random.Random(12345).shuffle(order)
  expected = next(f for f in features if f.example_index == order[0])
  assert first["input_ids"].numpy().tolist() == expected.input_ids
  assert int(first["unique_ids"]) == 1000000000


def test_predictions_cli_matches_golden_and_tunes_threshold(tmp_path):
  _, features = examples_and_features("features_v2_eval_128_64_32")
  raw = tmp_path / "raw_results.jsonl"
  write_raw_results(str(raw), random_results(features, 128, boost=7.0))
  common = dict(
    predict_file=input_path("small_v2"),
    raw_results_file=raw,
    vocab_file=VOCAB,
    max_seq_length=128,
    doc_stride=64,
    max_query_length=32,
    version_2_with_negative=True,
  )
  proc = _run(
    "data_prep.squad_predictions",
    output_dir=tmp_path / "a",
    null_score_diff_threshold=-1.0,
    **common,
  )
  assert proc.returncode == 0, proc.stderr
  folder = "pred_v2_eval_128_clsboost/"
  assert (tmp_path / "a" / "predictions.json").read_bytes() == golden_bytes(
    folder + "predictions_thr-1.json.gz"
  )
  got = json.loads((tmp_path / "a" / "eval_results.json").read_text())
  want = json.loads(
    (SQUAD / "squad_eval" / "expected_v2_clsboost_thr-1.json").read_text()
  )
  assert got == pytest.approx(want, abs=1e-9)
  # best_f1_thresh is 0.0 here, so the tuned run gives the thr0 files.
  proc = _run(
    "data_prep.squad_predictions",
    output_dir=tmp_path / "b",
    null_score_diff_threshold=-1.0,
    use_best_threshold=True,
    **common,
  )
  assert proc.returncode == 0, proc.stderr
  assert (tmp_path / "b" / "predictions.json").read_bytes() == golden_bytes(
    folder + "predictions_thr0.json.gz"
  )
  tuned = json.loads((tmp_path / "b" / "eval_results.json").read_text())
  assert tuned["null_score_diff_threshold"] == 0.0
  assert tuned["exact"] == pytest.approx(
    json.loads(
      (SQUAD / "squad_eval" / "expected_v2_clsboost_thr0.json").read_text()
    )["exact"],
    abs=1e-9,
  )


def _squad(qas, context="Paris is in France."):
  return {
    "version": "1.1",
    "data": [{"paragraphs": [{"context": context, "qas": qas}]}],
  }


def _qa(qid="q1", **answer):
  answer = dict({"text": "France", "answer_start": 12}, **answer)
  return {"id": qid, "question": "Where?", "answers": [answer]}


# name -> (file content, extra flags, text the one-line error must contain)
MALFORMED = {
  "not_json": (b"{oops", {}, "not valid JSON"),
  "not_utf8": (b'{"data": ["\xff"]}', {}, "not UTF-8"),
  "empty_file": (b"", {}, "not valid JSON"),
  "no_data": ({"version": "1.1"}, {}, "missing key 'data'"),
  "data_not_list": ({"data": {}}, {}, "'data' should be list"),
  "no_paragraphs": ({"data": [{"title": "x"}]}, {}, "missing key 'paragraphs'"),
  "no_context": (
    {"data": [{"paragraphs": [{"qas": []}]}]},
    {},
    "missing key 'context'",
  ),
  "context_not_str": (_squad([], context=3), {}, "'context' should be str"),
  "no_question": (
    _squad([{"id": "q1", "answers": []}]),
    {},
    "question q1: missing key 'question'",
  ),
  "duplicate_id": (
    _squad([_qa(), _qa()]),
    {},
    "question q1: duplicate question id",
  ),
  "two_answers": (
    _squad([dict(_qa(), answers=[_qa()["answers"][0]] * 2)]),
    {"is_training": True},
    "question q1: for training, each question should have exactly 1 answer",
  ),
  "start_outside": (
    _squad([_qa(answer_start=90)]),
    {"is_training": True},
    "question q1: answer_start 90",
  ),
  "start_not_int": (
    _squad([_qa(answer_start="12")]),
    {"is_training": True},
    "question q1 answer: 'answer_start' should be int",
  ),
  "empty_answer": (
    _squad([_qa(text="")]),
    {"is_training": True},
    "question q1: the answer text is empty",
  ),
  "no_is_impossible": (
    _squad([_qa()]),
    {"is_training": True, "version_2_with_negative": True},
    "question q1: missing key 'is_impossible'",
  ),
  "bad_settings": (
    _squad([_qa()]),
    {"max_query_length": 400},
    "must be greater than max_query_length",
  ),
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_input_gives_one_line_error(tmp_path, name):
  content, flags, message = MALFORMED[name]
  path = tmp_path / (name + ".json")
  path.write_bytes(
    content if isinstance(content, bytes) else json.dumps(content).encode()
  )
  out = tmp_path / "out" / "x.tf_record"
  proc = _run(
    "data_prep.squad",
    input_file=path,
    output_file=out,
    vocab_file=VOCAB,
    **flags,
  )
  assert proc.returncode == 1
  lines = proc.stderr.strip().splitlines()
  assert lines[-1].startswith("ERROR: ") and message in lines[-1], proc.stderr
  assert "Traceback" not in proc.stderr
  assert not out.parent.exists() or not os.listdir(out.parent)


def test_bad_raw_results_line(tmp_path):
  raw = tmp_path / "raw.jsonl"
  raw.write_text('{"unique_id": 1000000000, "start_logits": [1.0]}\n')
  proc = _run(
    "data_prep.squad_predictions",
    predict_file=input_path("small_v1"),
    raw_results_file=raw,
    vocab_file=VOCAB,
    output_dir=tmp_path / "o",
  )
  assert proc.returncode == 1
  assert (
    proc.stderr.strip()
    .splitlines()[-1]
    .startswith("ERROR: %s line 1: bad raw result" % raw)
  )
  assert not (tmp_path / "o").exists()


def test_golden_v1_eval_cli_sidecar(tmp_path):
  out = tmp_path / "eval.tf_record"
  proc = _run(
    "data_prep.squad",
    input_file=input_path("small_v1"),
    output_file=out,
    vocab_file=VOCAB,
  )
  assert proc.returncode == 0, proc.stderr
  _, features = squad_records.read_features_sidecar(
    str(out) + ".features.jsonl"
  )
  golden = golden_jsonl("features_v1_eval_384_128_64.jsonl.gz")
  assert [f.tokens for f in features] == [g["tokens"] for g in golden]
  assert [f.qas_id for f in features] == [g["qas_id"] for g in golden]
