"""Slow: the demo's model (examples/demo.sh: tiny BERT fine-tuned on the
shipped Super_Bowl_50 article) exported from its run's engine checkpoint
answers the article's 810 questions like run_squad.py's predictions.json.
Differences are printed with the n-best scores that explain them; at least
99% must agree (measured: all 810)."""

import json
import os
import subprocess
import sys

import pytest

from data_prep.squad.example import split_context
from tests.conftest import REPO
from tests.export.standalone import export
from tests.export.standalone import serve

pytestmark = pytest.mark.process  # starts programs

DATA = REPO / "examples" / "data" / "squad_dev_v1.1_super_bowl_50.json"
COMMON = [
  "--vocab_file=%s" % (REPO / "examples/data/vocab.txt"),
  "--bert_config_file=%s" % (REPO / "examples/bert_config_tiny.json"),
  "--max_seq_length=192",
  "--doc_stride=64",
  "--max_query_length=32",
]


def _python(*args):
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
  result = subprocess.run(
    [sys.executable] + list(args),
    cwd=REPO,
    env=env,
    capture_output=True,
    text=True,
    timeout=1800,
    check=False,
  )
  assert result.returncode == 0, result.stderr[-3000:]


@pytest.mark.slow
def test_super_bowl_answers_match_run_squad(tmp_path):
  train_file = tmp_path / "train.json"
  _python(
    "-m",
    "examples.squad_slice",
    "--input_file=%s" % DATA,
    "--output_file=%s" % train_file,
    "--first_answer_only",
  )
  run = tmp_path / "squad"
  _python(
    "run_squad.py",
    *COMMON,
    "--do_train",
    "--do_predict",
    "--train_file=%s" % train_file,
    "--predict_file=%s" % DATA,
    "--train_batch_size=32",
    "--learning_rate=1e-3",
    "--num_train_epochs=8",
    "--save_checkpoints_steps=50",
    "--iterations_per_loop=10",
    "--predict_batch_size=32",
    "--seed=12345",
    "--output_dir=%s" % run,
  )
  expected = json.loads((run / "predictions.json").read_text())
  nbest = json.loads((run / "nbest_predictions.json").read_text())
  export_dir = export(
    tmp_path, "squad_sm", "--task=squad", "--checkpoint=%s" % run, *COMMON
  )
  data = json.loads(DATA.read_text())
  questions = [
    (qa["id"], qa["question"], p["context"])
    for article in data["data"]
    for p in article["paragraphs"]
    for qa in p["qas"]
  ]
  requests = [
    {
      "question": [q for _, q, _ in questions[i : i + 64]],
      "context": [c for _, _, c in questions[i : i + 64]],
    }
    for i in range(0, len(questions), 64)
  ]
  answers = serve(export_dir, requests, timeout=1800)
  got = {}
  for i, answer in enumerate(answers):
    for j, (qid, _, context) in enumerate(questions[i * 64 : (i + 1) * 64]):
      text, start = answer["answer"][j], answer["start_char"][j]
      got[qid] = (text, answer["score"][j])
      assert (
        " ".join(split_context(context[start : answer["end_char"][j]])) == text
      ), qid
  differences = [qid for qid in expected if got[qid][0] != expected[qid]]
  for qid in differences:
    top = nbest[qid][:2]
    print(
      "DIFF %s: run_squad %r (%.6f; runner-up %r %.6f), SavedModel %r "
      "(%.6f)"
      % (
        qid,
        expected[qid],
        top[0]["start_logit"] + top[0]["end_logit"],
        top[-1]["text"],
        top[-1]["start_logit"] + top[-1]["end_logit"],
        got[qid][0],
        got[qid][1],
      )
    )
  agree = 1 - len(differences) / len(expected)
  print(
    "SavedModel agrees with predictions.json on %d/%d questions "
    "(%.2f%%)" % (len(expected) - len(differences), len(expected), 100 * agree)
  )
  assert len(expected) == 810 and agree >= 0.99
