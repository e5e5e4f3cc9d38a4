"""Multiple-choice SavedModel vs run_multiple_choice.py: loaded in a process
without bert_tf, the exported model gives test_results.tsv's probabilities
(within 1e-5) for the same raw examples, SWAG rows plus truncated, empty and
non-ASCII ones; --noprefix; bad requests."""

import json
import os
import subprocess
import sys

import pytest

from data_prep.multiple_choice.examples import read_examples
from tests.conftest import FIXTURES
from tests.conftest import REPO
from tests.export.standalone import export
from tests.export.standalone import raw_bytes
from tests.export.standalone import serve
from tests.helpers.checkpoints import ckpt_prefix

pytestmark = pytest.mark.process  # starts programs

ENCODER = FIXTURES / "encoder"
CONFIG_B = str(ENCODER / "ckpt_b" / "bert_config.json")
VOCAB = str(ENCODER / "vocab_small.txt")
MAX_SEQ_LENGTH = 24
# Beyond SWAG's: truncation on either side, no prefix, empty texts, accents
# and CJK.
EXTRA = [
  {
    "context": "the man " * 20,
    "prefix": "He",
    "endings": ["sits.", "runs " * 15, "", "eats a spoon."],
  },
  {"context": "Café RÉSUMÉ naïve", "endings": ["北京", "x", "y z", "."]},
  {"context": "", "prefix": "", "endings": ["", "a", "", "b"]},
]


def _data_dir(tmp_path):
  """SWAG train.csv; a test.jsonl of test.csv's rows and EXTRA."""
  data_dir = tmp_path / "swag"
  data_dir.mkdir()
  swag = FIXTURES / "swag"
  (data_dir / "train.csv").write_bytes((swag / "train.csv").read_bytes())
  rows = [
    {"context": e.context, "prefix": e.prefix, "endings": e.endings}
    for e in read_examples(str(swag / "test.csv"), "test")
  ]
  (data_dir / "test.jsonl").write_text(
    "".join(json.dumps(r) + "\n" for r in rows + EXTRA), encoding="utf-8"
  )
  return data_dir


@pytest.fixture(scope="module")
def swag_run(tmp_path_factory):
  """A run_multiple_choice.py run (train + predict) on ckpt_b + export."""
  tmp_path = tmp_path_factory.mktemp("swag_run")
  data_dir, output_dir = _data_dir(tmp_path), tmp_path / "output"
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
  result = subprocess.run(
    [
      sys.executable,
      "run_multiple_choice.py",
      "--data_dir=%s" % data_dir,
      "--output_dir=%s" % output_dir,
      "--vocab_file=%s" % VOCAB,
      "--bert_config_file=%s" % CONFIG_B,
      "--init_checkpoint=%s" % ckpt_prefix("ckpt_b"),
      "--max_seq_length=%d" % MAX_SEQ_LENGTH,
      "--do_train",
      "--do_predict",
      "--train_batch_size=2",
      "--num_train_epochs=15",
      "--learning_rate=1e-3",
      "--seed=1",  # some inits stay near uniform after 15 epochs; not this
      "--save_checkpoints_steps=0",
      "--noprogress",
    ],
    cwd=REPO,
    env=env,
    capture_output=True,
    text=True,
    timeout=300,
    check=False,
  )
  assert result.returncode == 0, result.stderr[-3000:]
  args = [
    "--task=multiple_choice",
    "--checkpoint=%s" % output_dir,
    "--bert_config_file=%s" % CONFIG_B,
    "--vocab_file=%s" % VOCAB,
    "--max_seq_length=%d" % MAX_SEQ_LENGTH,
  ]
  examples = read_examples(str(data_dir / "test.jsonl"), "test")
  expected = [
    [float(p) for p in line.split("\t")]
    for line in (output_dir / "test_results.tsv").read_text().splitlines()
  ]
  return {
    "sm": export(tmp_path, "swag_sm", *args),
    "noprefix": export(tmp_path, "noprefix_sm", "--noprefix", *args),
    "examples": examples,
    "expected": expected,
  }


def test_probabilities_match_run_multiple_choice(swag_run):
  examples, expected = swag_run["examples"], swag_run["expected"]
  request = {
    "context": [e.context for e in examples],
    "prefix": [e.prefix for e in examples],
    "endings": [e.endings for e in examples],
  }
  (answer,) = serve(swag_run["sm"], [request])
  assert len(answer["probabilities"]) == len(expected) == len(examples) == 6
  # A trained head, not a uniform one.
  assert max(max(p) for p in expected) > 0.3
  for got, want, label in zip(
    answer["probabilities"], expected, answer["label"]
  ):
    assert got == pytest.approx(want, abs=1e-5)
    assert label == want.index(max(want))


def test_noprefix_and_bad_requests(swag_run):
  examples, expected = swag_run["examples"], swag_run["expected"]
  # EXTRA[1] has no prefix: the same as the run without the input.
  (no_prefix,) = serve(
    swag_run["noprefix"],
    [{"context": [examples[4].context], "endings": [examples[4].endings]}],
  )
  assert no_prefix["probabilities"][0] == pytest.approx(expected[4], abs=1e-5)
  answers = serve(
    swag_run["sm"],
    [
      {"context": ["a"], "prefix": ["b"], "endings": [["c", "d"], ["e", "f"]]},
      {"context": ["a"], "prefix": ["b", "c"], "endings": [["c", "d"]]},
      {"context": ["a"], "prefix": ["b"], "endings": ["c", "d"]},
      {"context": ["a"], "prefix": ["b"], "endings": [[]]},
      {
        "context": [raw_bytes(b"caf\xc3\xa9 \xff")],
        "prefix": [""],
        "endings": [["x", "y"]],
      },
      {"context": ["caf\u00e9 "], "prefix": [""], "endings": [["x", "y"]]},
      {"context": [], "prefix": [], "endings": [[]]},
      {"context": ["a"], "prefix": ["b"], "endings": [["only one"]]},
    ],
  )
  assert "one row of choices per context" in answers[0]["error"]
  assert "same batch size" in answers[1]["error"]
  assert "error" in answers[2]
  assert "at least one choice" in answers[3]["error"]
  assert answers[4] == answers[5]  # bytes that are not UTF-8 are dropped
  assert len(answers[4]["probabilities"][0]) == 2
  assert "error" in answers[6] or answers[6]["probabilities"] == []
  assert answers[7] == {"probabilities": [[1.0]], "label": [0]}
