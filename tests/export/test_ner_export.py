"""NER SavedModel vs run_ner.py: loaded in a process without bert_tf, the
exported model tags the predict file's sentences exactly as
test_predictions.txt (short windows, so sentences span several); entity
spans are seqeval's chunks of those tags; with --document_context the rows
of a request are one document, as the run's; `tag_words` agrees with
`text`; bad requests give defined results or errors."""

import os
import shutil
import subprocess
import sys

import pytest
from seqeval.metrics.sequence_labeling import get_entities

from data_prep.ner import conll
from tests.conftest import FIXTURES
from tests.conftest import REPO
from tests.export.standalone import export
from tests.export.standalone import raw_bytes
from tests.export.standalone import serve
from tests.helpers.checkpoints import ckpt_prefix

pytestmark = pytest.mark.process  # starts programs

ENCODER = FIXTURES / "encoder"
NER = FIXTURES / "ner"
CONFIG_A = str(ENCODER / "ckpt_a" / "bert_config.json")
VOCAB = str(ENCODER / "vocab_small.txt")
# 12 positions: 10 pieces a window, so the long sentences need several.
MAX_SEQ_LENGTH = 12
LONG = (
  "Anna Jones of the United Nations met officials of the World Bank in "
  "Paris and Berlin while French banks rose ; unbelievably "
  "internationalization continued ."
)
HUGE = " ".join([LONG] * 700)  # ~100 kB, one sentence


def _predict_file(tmp_path):
  """test.txt + valid.txt sentences, a long one and words only."""
  sentences = conll.read_conll(str(NER / "test.txt")) + conll.read_conll(
    str(NER / "valid.txt")
  )
  blocks = ["\n".join(s.words) for s in sentences]
  blocks.append("\n".join(LONG.split()))
  blocks.append("\n".join((LONG + " " + LONG).split()))
  path = tmp_path / "predict.txt"
  path.write_text("\n\n".join(blocks) + "\n", encoding="utf-8")
  return path


def _run_ner(output_dir, predict_file, *args):
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
  result = subprocess.run(
    [
      sys.executable,
      "run_ner.py",
      "--data_dir=%s" % NER,
      "--predict_file=%s" % predict_file,
      "--output_dir=%s" % output_dir,
      "--vocab_file=%s" % VOCAB,
      "--bert_config_file=%s" % CONFIG_A,
      "--init_checkpoint=%s" % ckpt_prefix("ckpt_a"),
      "--max_seq_length=%d" % MAX_SEQ_LENGTH,
      "--do_predict",
      "--noprogress",
    ]
    + list(args),
    cwd=REPO,
    env=env,
    capture_output=True,
    text=True,
    timeout=300,
    check=False,
  )
  assert result.returncode == 0, result.stderr[-3000:]
  blocks = (output_dir / "test_predictions.txt").read_text().split("\n\n")
  return [
    [line.split(" ") for line in block.splitlines()]
    for block in blocks
    if block.strip()
  ]


@pytest.fixture(scope="module")
def ner_run(tmp_path_factory):
  """A run_ner.py run (train + predict) on ckpt_a; the same checkpoint's
  predictions with --document_context (the predict file is one
  document); both exports."""
  tmp_path = tmp_path_factory.mktemp("ner_run")
  output_dir, document_dir = tmp_path / "output", tmp_path / "document"
  predict_file = _predict_file(tmp_path)
  expected = _run_ner(
    output_dir,
    predict_file,
    "--do_train",
    "--deterministic",
    "--train_batch_size=4",
    "--num_train_epochs=30",
    "--learning_rate=1e-3",
    "--save_checkpoints_steps=0",
  )
  shutil.copytree(output_dir, document_dir)
  in_document = _run_ner(document_dir, predict_file, "--document_context")
  args = [
    "--task=ner",
    "--checkpoint=%s" % output_dir,
    "--labels_file=%s" % (output_dir / "label_list.txt"),
    "--bert_config_file=%s" % CONFIG_A,
    "--vocab_file=%s" % VOCAB,
    "--max_seq_length=%d" % MAX_SEQ_LENGTH,
    "--windows_per_call=3",
  ]
  return {
    "sm": export(tmp_path, "ner_sm", *args),
    "expected": expected,
    "document_sm": export(tmp_path, "document_sm", *args, "--document_context"),
    "in_document": in_document,
  }


def test_tags_match_run_ner(ner_run):
  export_dir, expected = ner_run["sm"], ner_run["expected"]
  texts = [" ".join(w for w, _ in rows) for rows in expected]
  want = [[t for _, t in rows] for rows in expected]
  # Nonsense tags would pass too: the run must have learned several.
  assert len({t for tags in want for t in tags}) >= 3
  (answer,) = serve(export_dir, [{"text": texts}])
  assert answer["num_words"] == [len(t) for t in want]
  for row, tags, words in zip(range(len(want)), want, answer["words"]):
    n = len(tags)
    assert answer["tags"][row][:n] == tags
    assert words[:n] == texts[row].split()
    entities = [
      (
        answer["entity_type"][row][i],
        answer["entity_start"][row][i],
        answer["entity_end"][row][i] - 1,
        answer["entity_text"][row][i],
      )
      for i in range(answer["num_entities"][row])
    ]
    assert entities == [
      (kind, start, end, " ".join(words[start : end + 1]))
      for kind, start, end in get_entities(tags)
    ]


def test_document_context_matches_run_ner(ner_run):
  expected = ner_run["in_document"]
  texts = [" ".join(w for w, _ in rows) for rows in expected]
  (answer,) = serve(ner_run["document_sm"], [{"text": texts}])
  tags = [row[:n] for row, n in zip(answer["tags"], answer["num_words"])]
  assert tags == [[t for _, t in rows] for rows in expected]
  # The context changed some tags, so it was used.
  assert tags != [[t for _, t in rows] for rows in ner_run["expected"]]


def test_tag_words_and_bad_requests(ner_run):
  export_dir, expected = ner_run["sm"], ner_run["expected"]
  words = [w for w, _ in expected[0]]
  second = [""] + words[:2] + ["", words[2]]
  padded = [words + [""], second + [""] * (len(words) - 4)]
  answers = serve(
    export_dir,
    [
      {"text": [" ".join(words), "  \t ", "", HUGE]},
      {"text": [raw_bytes(b"Anna \xff\xfe met Mary")]},
      {"text": ["Anna met Mary"]},
      {"text": [["a", "b"]]},
      {"text": []},
      {"text": [" ".join(words[:3])]},
    ],
  )
  whole, bad, clean, wrong, empty, short = answers
  assert whole["num_words"] == [len(words), 0, 0, len((HUGE).split())]
  assert whole["tags"][1] == whole["tags"][2] == [""] * len(whole["tags"][1])
  assert whole["num_entities"][1:3] == [0, 0]
  assert HUGE.split() == whole["words"][3]
  labels = conll.label_list(conll.read_conll(str(NER / "train.txt")))
  assert set(whole["tags"][3]) <= set(labels)  # every word tagged
  assert bad == clean  # bytes that are not UTF-8 are dropped
  assert "error" in wrong
  assert empty["num_words"] == [] and empty["tags"] == []

  # tag_words: "" entries are skipped, indices are columns of `words`.
  (by_words, rank1) = serve(
    export_dir, [{"words": padded}, {"words": words}], signature="tag_words"
  )
  tags = whole["tags"][0][: len(words)]
  assert by_words["tags"][0] == tags + [""]
  assert by_words["num_words"] == [len(words), 3]
  assert by_words["tags"][1] == [""] + short["tags"][0][:2] + [""] + short[
    "tags"
  ][0][2:3] + [""] * (len(words) - 4)
  n = whole["num_entities"][0]
  for key in ("entity_type", "entity_start", "entity_end", "entity_text"):
    assert by_words[key][0][:n] == whole[key][0][:n]
  columns = [1, 2, 4]  # where row 1's words sit
  n = short["num_entities"][0]
  assert by_words["num_entities"] == [whole["num_entities"][0], n]
  assert by_words["entity_start"][1][:n] == [
    columns[i] for i in short["entity_start"][0][:n]
  ]
  assert by_words["entity_end"][1][:n] == [
    columns[i - 1] + 1 for i in short["entity_end"][0][:n]
  ]
  assert "error" in rank1
