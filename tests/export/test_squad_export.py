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

from bert_tf.tokenizers.tokenization import FullTokenizer
from data_prep.squad import postprocess
from data_prep.squad import raw_results
from data_prep.squad.example import read_squad_examples
from data_prep.squad.example import split_context
from data_prep.squad.features import convert_examples_to_features
from tests.conftest import FIXTURES
from tests.conftest import REPO
from tests.export.standalone import export
from tests.export.standalone import serve
from tests.helpers.checkpoints import ckpt_prefix

pytestmark = pytest.mark.process  # starts programs

ENCODER = FIXTURES / "encoder"
# Short windows, so most contexts take several (stride 32 over 64 tokens).
SETTINGS = [
  "--vocab_file=%s" % (ENCODER / "vocab_small.txt"),
  "--bert_config_file=%s" % (ENCODER / "ckpt_b" / "bert_config.json"),
  "--max_seq_length=64",
  "--doc_stride=32",
  "--max_query_length=16",
]


def _slice(tmp_path, name, paragraphs):
  data = json.load(gzip.open(FIXTURES / "squad" / (name + ".json.gz")))
  data["data"] = data["data"][:1]
  data["data"][0]["paragraphs"] = data["data"][0]["paragraphs"][:paragraphs]
  path = tmp_path / (name + ".json")
  path.write_text(json.dumps(data))
  return path, data


def _questions(data):
  return [
    (qa["id"], qa["question"], p["context"])
    for article in data["data"]
    for p in article["paragraphs"]
    for qa in p["qas"]
  ]


def _run_squad(tmp_path, predict_file, *args):
  output_dir = tmp_path / "run"
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
  result = subprocess.run(
    [
      sys.executable,
      "run_squad.py",
      "--do_predict",
      "--noprogress",
      "--predict_file=%s" % predict_file,
      "--output_dir=%s" % output_dir,
      "--init_checkpoint=%s" % ckpt_prefix("ckpt_b"),
      "--predict_batch_size=16",
    ]
    + SETTINGS
    + list(args),
    cwd=REPO,
    env=env,
    capture_output=True,
    text=True,
    timeout=300,
    check=False,
  )
  assert result.returncode == 0, result.stderr[-3000:]
  return output_dir


def _middle_threshold(odds):
  """Midway between the two middle null odds, so both kinds of answer occur
  and no question sits on the threshold (where rounding, e.g. of fused
  kernels at another batch size, could flip it)."""
  values = sorted(odds)
  return (values[len(values) // 2 - 1] + values[len(values) // 2]) / 2


def _v2_expected(output_dir):
  """predictions.json at the middle threshold: "" above it, else the best
  non-null n-best text."""
  odds = json.loads((output_dir / "null_odds.json").read_text())
  nbest = json.loads((output_dir / "nbest_predictions.json").read_text())
  threshold = _middle_threshold(odds.values())
  return threshold, {
    qid: ""
    if odds[qid] > threshold
    else next(e["text"] for e in nbest[qid] if e["text"])
    for qid in odds
  }


def _served_answers(export_dir, data, v2):
  """{question id: answer} from the SavedModel, in two requests of mixed
  size (batching must not change any answer); checks the offsets."""
  questions = _questions(data)
  parts = (questions[:7], questions[7:])
  answers = serve(
    export_dir,
    [
      {"question": [q for _, q, _ in part], "context": [c for _, _, c in part]}
      for part in parts
    ],
  )
  got = {}
  for part, answer in zip(parts, answers):
    assert ("null_score" in answer) == v2
    for i, (qid, _, context) in enumerate(part):
      text, start, end = (
        answer["answer"][i],
        answer["start_char"][i],
        answer["end_char"][i],
      )
      got[qid] = text
      if text:
        # The answer, with the original's single spaces between words.
        assert " ".join(split_context(context[start:end])) == text, qid
      else:
        assert (start, end) == (-1, -1)
  return got


@pytest.fixture(scope="module")
def v2_run(tmp_path_factory):
  tmp_path = tmp_path_factory.mktemp("squad_v2")
  predict_file, data = _slice(tmp_path, "small_v2", 2)
  output_dir = _run_squad(tmp_path, predict_file, "--version_2_with_negative")
  return predict_file, data, output_dir


def test_v1_answers_match_run_squad(tmp_path):
  predict_file, data = _slice(tmp_path, "small_v1_first_answer", 3)
  output_dir = _run_squad(tmp_path, predict_file)
  expected = json.loads((output_dir / "predictions.json").read_text())
  # Few windows per model call: the answers must not depend on chunking.
  export_dir = export(
    tmp_path,
    "squad_sm",
    "--task=squad",
    "--checkpoint=%s" % ckpt_prefix("ckpt_b"),
    "--windows_per_call=5",
    *SETTINGS,
  )
  assert _served_answers(export_dir, data, False) == expected


def test_v2_answers_match_run_squad(v2_run, tmp_path):
  _, data, output_dir = v2_run
  threshold, expected = _v2_expected(output_dir)
  export_dir = export(
    tmp_path,
    "squad_sm",
    "--task=squad",
    "--checkpoint=%s" % ckpt_prefix("ckpt_b"),
    "--version_2_with_negative",
    "--null_score_diff_threshold=%r" % threshold,
    *SETTINGS,
  )
  got = _served_answers(export_dir, data, True)
  assert got == expected
  assert "" in got.values() and set(got.values()) != {""}


# Slow (~13 s on 2 cores); `make test-all` runs it.
@pytest.mark.slow
def test_v2_single_best_matches_postprocess(v2_run, tmp_path):
  """--n_best_size=1: the n-best can hold only the null answer (then no
  non-null answer exists); expected from run_squad's logits re-scored by
  data_prep's post-processing."""
  predict_file, data, output_dir = v2_run
  examples = read_squad_examples(str(predict_file), False, True)
  features = []
  convert_examples_to_features(
    examples,
    FullTokenizer(str(ENCODER / "vocab_small.txt"), True),
    64,
    32,
    16,
    False,
    features.append,
  )
  results = raw_results.read_raw_results(str(output_dir / "raw_results.jsonl"))
  scored = postprocess.compute_predictions(
    examples, features, results, 1, 30, True, True
  )
  threshold = _middle_threshold(scored.null_odds.values())
  postprocess.apply_threshold(scored, threshold)
  export_dir = export(
    tmp_path,
    "squad_sm",
    "--task=squad",
    "--checkpoint=%s" % ckpt_prefix("ckpt_b"),
    "--version_2_with_negative",
    "--n_best_size=1",
    "--null_score_diff_threshold=%r" % threshold,
    *SETTINGS,
  )
  assert _served_answers(export_dir, data, True) == scored.predictions
