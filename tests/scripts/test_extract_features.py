"""extract_features.py: the original JSON-lines shape, truncation, errors."""

import json
import subprocess
import sys

import numpy as np
import pytest

from bert_tf.io_utils import InputError
from data_prep.extract_features.examples import read_examples
from tests import conftest
from tests.helpers.checkpoints import ckpt_prefix
from tests.helpers.checkpoints import ENCODER_DIR
from tests.helpers.checkpoints import load_golden

REPO = str(conftest.REPO)
INPUT = str(ENCODER_DIR / "extract_input.txt")

# Line numbers in vocab_small.txt (0-based ids).
_IDS = {
  "[CLS]": 101,
  "[SEP]": 102,
  "the": 1996,
  "world": 2088,
  "was": 2001,
  "long": 2146,
  "it": 2009,
  "sat": 2938,
  "on": 2006,
}


def _run(tmp_path, **overrides):
  flags = {
    "input_file": INPUT,
    "output_file": str(tmp_path / "out.jsonl"),
    "vocab_file": str(ENCODER_DIR / "vocab_small.txt"),
    "bert_config_file": str(ENCODER_DIR / "ckpt_a" / "bert_config.json"),
    "init_checkpoint": ckpt_prefix("ckpt_a"),
    "layers": "-1,0",
    "max_seq_length": "10",
    "batch_size": "3",
  }
  flags.update(overrides)
  return subprocess.run(
    [sys.executable, "extract_features.py"]
    + ["--%s=%s" % kv for kv in flags.items()],
    cwd=REPO,
    capture_output=True,
    text=True,
    check=False,
  )


@pytest.mark.process
def test_output_format_and_values(tmp_path):
  result = _run(tmp_path)
  assert result.returncode == 0, result.stderr
  lines = (tmp_path / "out.jsonl").read_text().splitlines()
  records = [json.loads(line) for line in lines]
  assert [r["linex_index"] for r in records] == [0, 1, 2, 3]
  assert lines[0].startswith(
    '{"linex_index": 0, "features": [{"token": '
    '"[CLS]", "layers": [{"index": -1, "values": ['
  )
  tokens = [[f["token"] for f in r["features"]] for r in records]
  # Pair budget 10 - 3 = 7: B is popped until both sides fit.
  pair = [
    "[CLS]",
    "the",
    "world",
    "was",
    "long",
    "[SEP]",
    "it",
    "sat",
    "on",
    "[SEP]",
  ]
  assert tokens[0] == pair
  assert tokens[1] == [
    "[CLS]",
    "the",
    "world",
    "was",
    "long",
    "it",
    "sat",
    "on",
    "a",
    "[SEP]",
  ]
  assert tokens[2] == ["[CLS]", "[SEP]"]
  # U+2028 does not end the line (split on "\n" only).
  assert tokens[3] == ["[CLS]", "the", "world", "[SEP]"]
  for feature in records[0]["features"]:
    assert [layer["index"] for layer in feature["layers"]] == [-1, 0]
    for layer in feature["layers"]:
      assert len(layer["values"]) == 64
      assert all(round(v, 6) == v for v in layer["values"])
  # Values: the golden-verified encoder on hand-built ids for the pair.
  _, encoder, _, _ = load_golden("ckpt_a")
  ids = np.array([[_IDS[t] for t in pair]], np.int32)
  segments = np.array([[0] * 6 + [1] * 4], np.int32)
  out = encoder({"input_ids": ids, "segment_ids": segments})
  layers = out["encoder_outputs"]
  got = np.array(
    [[layer["values"] for layer in f["layers"]] for f in records[0]["features"]]
  )  # [S, 2, H]
  np.testing.assert_allclose(got[:, 0], layers[-1][0], atol=2e-6)
  np.testing.assert_allclose(got[:, 1], layers[0][0], atol=2e-6)


@pytest.mark.process
def test_bfloat16_values_are_float32_rounded(tmp_path):
  """--dtype=mixed_bfloat16: same lines and tokens, values printed as
  float32 and within bfloat16 rounding (2% of the range) of float32's."""
  runs = {}
  for dtype in ("float32", "mixed_bfloat16"):
    folder = tmp_path / dtype
    folder.mkdir()
    result = _run(folder, dtype=dtype)
    assert result.returncode == 0, result.stderr
    runs[dtype] = [
      json.loads(line)
      for line in (folder / "out.jsonl").read_text().splitlines()
    ]
  for want, got in zip(runs["float32"], runs["mixed_bfloat16"]):
    assert [f["token"] for f in got["features"]] == [
      f["token"] for f in want["features"]
    ]
    values = [
      np.array([[l["values"] for l in f["layers"]] for f in r["features"]])
      for r in (want, got)
    ]
    np.testing.assert_allclose(
      values[1], values[0], rtol=0, atol=0.02 * np.max(np.abs(values[0]))
    )
    assert not np.array_equal(values[1], values[0])


@pytest.mark.process
@pytest.mark.parametrize(
  "overrides, culprit",
  [
    ({"vocab_file": "/nonexistent/vocab.txt"}, "vocab_file"),
    ({"input_file": "/nonexistent/in.txt"}, "input_file"),
    (
      {"bert_config_file": str(ENCODER_DIR / "ckpt_b" / "bert_config.json")},
      "bert/embeddings/word_embeddings is [3000, 64], but the config",
    ),
  ],
)
def test_bad_inputs_exit_with_one_line(tmp_path, overrides, culprit):
  result = _run(tmp_path, **overrides)
  assert result.returncode == 1
  last = result.stderr.strip().splitlines()[-1]
  assert last.startswith("ERROR: ") and culprit in last
  assert "Traceback" not in result.stderr
  assert not (tmp_path / "out.jsonl").exists()


def test_read_examples(tmp_path):
  path = tmp_path / "in.txt"
  path.write_bytes("a ||| b\n  x\u2028y  \nnot|||pair\n".encode("utf-8"))
  examples = read_examples(str(path))
  assert [(e.unique_id, e.text_a, e.text_b) for e in examples] == [
    (0, "a", "b"),
    (1, "x\u2028y", None),
    (2, "not|||pair", None),
  ]
  path.write_bytes(b"\xff\xfe bad")
  with pytest.raises(InputError, match="in.txt"):
    read_examples(str(path))


@pytest.mark.process
def test_a_run_without_attentions_removes_an_earlier_runs_maps(tmp_path):
  assert _run(tmp_path, output_attentions="true").returncode == 0
  maps = tmp_path / "out.jsonl.attentions.npz"
  assert maps.is_file()
  # The maps described the earlier lines: they go with them.
  result = _run(tmp_path, layers="-1")
  assert result.returncode == 0, result.stderr
  assert not maps.exists()
  assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl"]
