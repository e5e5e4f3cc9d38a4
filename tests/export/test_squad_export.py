"""SQuAD SavedModel vs run_squad.py: loaded in a process without bert_tf,
the exported model answers every question of a small SQuAD v1.1 / v2.0 slice
exactly as predictions.json does (tiny original checkpoint, doc-stride
windows over every context), and its offsets point at the answer."""

import gzip
import json
import os
import subprocess
import sys

import pytest

from data_prep.squad.example import split_context
from tests.conftest import FIXTURES
from tests.conftest import REPO
from tests.export.standalone import export
from tests.export.standalone import serve
from tests.modeling.test_common import ckpt_prefix

ENCODER = FIXTURES / "encoder"
# Short windows, so most contexts take several (stride 32 over 64 tokens).
SETTINGS = ["--vocab_file=%s" % (ENCODER / "vocab_small.txt"),
            "--bert_config_file=%s" % (ENCODER / "ckpt_b" / "bert_config.json"),
            "--max_seq_length=64", "--doc_stride=32", "--max_query_length=16"]


def _slice(tmp_path, name, paragraphs):
  data = json.load(gzip.open(FIXTURES / "squad" / (name + ".json.gz")))
  data["data"] = data["data"][:1]
  data["data"][0]["paragraphs"] = data["data"][0]["paragraphs"][:paragraphs]
  path = tmp_path / (name + ".json")
  path.write_text(json.dumps(data))
  return path, data


def _questions(data):
  return [(qa["id"], qa["question"], p["context"])
          for article in data["data"] for p in article["paragraphs"]
          for qa in p["qas"]]


def _run_squad(tmp_path, predict_file, *args):
  output_dir = tmp_path / "run"
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
  result = subprocess.run(
      [sys.executable, "run_squad.py", "--do_predict", "--noprogress",
       "--predict_file=%s" % predict_file, "--output_dir=%s" % output_dir,
       "--init_checkpoint=%s" % ckpt_prefix("ckpt_b"),
       "--predict_batch_size=16"] + SETTINGS + list(args), cwd=REPO,
      env=env, capture_output=True, text=True, timeout=300, check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  return output_dir


def _v2_expected(output_dir):
  """predictions.json at the median null odds (so both kinds of answer
  occur): "" above it, else the best non-null n-best text."""
  odds = json.loads((output_dir / "null_odds.json").read_text())
  nbest = json.loads((output_dir / "nbest_predictions.json").read_text())
  threshold = sorted(odds.values())[len(odds) // 2]
  return threshold, {
      qid: "" if odds[qid] > threshold else
      next(e["text"] for e in nbest[qid] if e["text"]) for qid in odds}


@pytest.mark.parametrize("name, paragraphs, v2_args", [
    ("small_v1_first_answer", 3, []),
    ("small_v2", 2, ["--version_2_with_negative"]),
])
def test_answers_match_run_squad(tmp_path, name, paragraphs, v2_args):
  predict_file, data = _slice(tmp_path, name, paragraphs)
  output_dir = _run_squad(tmp_path, predict_file, *v2_args)
  expected = json.loads((output_dir / "predictions.json").read_text())
  if v2_args:
    threshold, expected = _v2_expected(output_dir)
    v2_args = v2_args + ["--null_score_diff_threshold=%r" % threshold]
  export_dir = export(tmp_path, "squad_sm", "--task=squad",
                      "--checkpoint=%s" % ckpt_prefix("ckpt_b"),
                      *(SETTINGS + v2_args))
  questions = _questions(data)
  # Two requests of mixed size: batching must not change any answer.
  requests = [{"question": [q for _, q, _ in part],
               "context": [c for _, _, c in part]}
              for part in (questions[:7], questions[7:])]
  answers = serve(export_dir, requests)
  got = {}
  for part, answer in zip((questions[:7], questions[7:]), answers):
    for i, (qid, _, context) in enumerate(part):
      text, start, end = (answer["answer"][i], answer["start_char"][i],
                          answer["end_char"][i])
      got[qid] = text
      if text:
        # The answer, with the original's single spaces between words.
        assert " ".join(split_context(context[start:end])) == text, qid
      else:
        assert (start, end) == (-1, -1)
      if v2_args:
        assert "null_score" in answer
  assert got == expected
  if v2_args:
    assert "" in got.values() and set(got.values()) != {""}
