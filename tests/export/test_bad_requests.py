"""Bad requests to exported SavedModels (served without bert_tf): empty
strings, a 100 kB text, bytes that are not UTF-8, wrong shapes and empty
batches give a defined result or a clear error, and the process goes on
serving."""

import pytest

from tests.conftest import FIXTURES
from tests.export.standalone import export
from tests.export.standalone import raw_bytes
from tests.export.standalone import serve
from tests.helpers.checkpoints import ckpt_prefix

pytestmark = pytest.mark.process  # starts programs

# ckpt_a: 2 layers, 64 positions, every head (classifier with 3 labels).
ARGS = [
  "--checkpoint=%s" % ckpt_prefix("ckpt_a"),
  "--vocab_file=%s" % (FIXTURES / "encoder" / "vocab_small.txt"),
  "--max_seq_length=64",
]
LONG = "the game was played in santa clara . " * 2700  # ~100 kB
BAD_UTF8 = b"the caf\xc3\xa9 \xff\xfeopened in 19\x8090 ."
CLEAN = "the caf\u00e9 opened in 1990 ."  # BAD_UTF8 without its bad bytes


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
  tmp_path = tmp_path_factory.mktemp("bad_requests")
  return {
    "classifier": export(
      tmp_path, "classifier", "--task=classifier", "--labels=a,b,c", *ARGS
    ),
    "squad": export(
      tmp_path,
      "squad",
      "--task=squad",
      "--doc_stride=32",
      "--max_query_length=16",
      *ARGS,
    ),
  }


def test_classifier(exports):
  ok = {"text_a": ["who won?"], "text_b": ["denver"]}
  answers = serve(
    exports["classifier"],
    [
      {"text_a": ["", "x"], "text_b": ["", ""]},
      {"text_a": [LONG], "text_b": [LONG]},
      {"text_a": [raw_bytes(BAD_UTF8)], "text_b": [""]},
      {"text_a": [CLEAN], "text_b": [""]},
      {"text_a": [["a", "b"], ["c", "d"]], "text_b": [["b"]]},
      {"text_a": "a", "text_b": "b"},
      {"text_a": ["a", "b"], "text_b": ["c"]},
      {"text_a": ["a"]},
      {"text_a": [], "text_b": []},
      ok,
    ],
  )
  empty, long, bad, clean = answers[:4]
  assert len(empty["probabilities"]) == 2 and len(long["label"]) == 1
  assert bad == clean  # bad bytes are dropped, as the Python tokenizer does
  for wrong in answers[4:8]:
    assert "error" in wrong
  assert "same batch size" in answers[6]["error"]
  assert answers[8] == {"probabilities": [], "label": []}
  assert answers[9]["label"][0] in ("a", "b", "c")


def test_squad(exports):
  context = "Super Bowl 50 was played in Santa Clara , California ."
  answers = serve(
    exports["squad"],
    [
      {"question": ["", "where?"], "context": ["", " \t\n"]},
      {"question": ["where was it played ?"], "context": [LONG]},
      {"question": ["when ?"], "context": [raw_bytes(BAD_UTF8)]},
      {"question": ["when ?"], "context": [CLEAN]},
      {"question": ["a", "b"], "context": [context]},
      {"question": [["a"]], "context": [[context]]},
      {"question": [], "context": []},
      {"question": ["where ?"], "context": [context]},
    ],
  )
  empty, long, bad, clean = answers[:4]
  assert empty["answer"] == ["empty", "empty"]  # the original's "no span"
  assert empty["start_char"] == empty["end_char"] == [-1, -1]
  start, end = long["start_char"][0], long["end_char"][0]
  assert 0 <= start < end <= len(LONG)
  assert " ".join(LONG[start:end].split()) == long["answer"][0]
  assert bad == clean
  assert "same batch size" in answers[4]["error"]
  assert "error" in answers[5]
  assert answers[6]["answer"] == []
  ok = answers[7]
  start, end = ok["start_char"][0], ok["end_char"][0]
  assert context[start:end] == ok["answer"][0]
