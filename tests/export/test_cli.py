"""python -m bert_tf.export_saved_model: flag and checkpoint errors end in
one `ERROR: ...` line naming the culprit, and nothing is written."""

import pytest

from tests.conftest import FIXTURES
from tests.helpers.checkpoints import ckpt_prefix
from tests.helpers.cli import run_mains

pytestmark = pytest.mark.process  # starts programs

VOCAB = "--vocab_file=%s" % (FIXTURES / "encoder" / "vocab_small.txt")
CKPT_A = "--checkpoint=%s" % ckpt_prefix("ckpt_a")
CKPT_B = "--checkpoint=%s" % ckpt_prefix("ckpt_b")
SHORT = "--max_seq_length=32"


def test_errors(tmp_path):
  out = "--export_dir=%s" % (tmp_path / "sm")
  existing = tmp_path / "exists"
  existing.mkdir()
  cases = [
    ([CKPT_A, VOCAB, out], "--task is required"),
    (
      ["--task=classifier", "--labels=a,b", VOCAB, out],
      "--checkpoint is required",
    ),
    (
      [
        "--task=classifier",
        "--task_name=mrpc",
        "--labels=a,b",
        CKPT_A,
        VOCAB,
        out,
        SHORT,
      ],
      "exactly one of --task_name, --labels",
    ),
    (
      ["--task=classifier", "--task_name=nope", CKPT_A, VOCAB, out, SHORT],
      "--task_name=nope: no label list known",
    ),
    (
      ["--task=classifier", "--labels=a,a", CKPT_A, VOCAB, out, SHORT],
      "two or more distinct labels",
    ),
    # ckpt_b has no classifier head: no random weights get exported.
    (
      ["--task=classifier", "--labels=a,b", CKPT_B, VOCAB, out, SHORT],
      "weights of the classifier model are not in the checkpoint",
    ),
    # ckpt_a's head has 3 labels.
    (
      ["--task=classifier", "--labels=a,b", CKPT_A, VOCAB, out, SHORT],
      "output_bias has shape [3] in the checkpoint but [2]",
    ),
    (
      ["--task=squad", "--labels=a,b", CKPT_A, VOCAB, out, SHORT],
      "--labels is not an option of --task=squad",
    ),
    (
      ["--task=squad", CKPT_A, VOCAB, out],
      "max_seq_length 384 is longer than the model's",
    ),
    (
      [
        "--task=squad",
        "--max_seq_length=64",
        "--max_query_length=61",
        CKPT_A,
        VOCAB,
        out,
      ],
      "leaves no room for the context",
    ),
    (
      ["--task=encoder", "--checkpoint=%s" % tmp_path, VOCAB, out],
      "directory has no TF checkpoint",
    ),
    (
      ["--task=encoder", CKPT_A, "--export_dir=%s" % existing],
      "already exists",
    ),
    (
      ["--task=encoder", "--checkpoint=%s" % (tmp_path / "x.ckpt"), out],
      "no TF checkpoint here",
    ),
    (["--task=encoder", CKPT_A, out], "--vocab_file is required"),
    (
      ["--task=ner", CKPT_A, VOCAB, out, SHORT],
      "needs one of --labels and --labels_file",
    ),
    (
      ["--task=ner", "--labels=O,PER", CKPT_A, VOCAB, out, SHORT],
      "labels O,PER: need distinct IOB2 tags",
    ),
    # The command's range check (flag_checks.RANGES) answers first.
    (
      [
        "--task=ner",
        "--labels=O,B-X,I-X",
        "--lstm_units=0",
        CKPT_A,
        VOCAB,
        out,
        SHORT,
      ],
      "--lstm_units=0: must be >= 1",
    ),
    (
      [
        "--task=ner",
        "--labels_file=%s" % (tmp_path / "none.txt"),
        CKPT_A,
        VOCAB,
        out,
        SHORT,
      ],
      "--labels_file=%s" % (tmp_path / "none.txt"),
    ),
    (
      ["--task=ner", "--labels=O,B-X,I-X", CKPT_A, VOCAB, out, SHORT],
      "weights of the ner model are not in the checkpoint",
    ),
    (
      ["--task=multiple_choice", CKPT_A, VOCAB, out, SHORT],
      "weights of the multiple_choice model are not in the checkpoint",
    ),
    (
      ["--task=multiple_choice", "--labels=a,b", CKPT_A, VOCAB, out, SHORT],
      "--labels is not an option of --task=multiple_choice",
    ),
  ]
  results, _ = run_mains(
    "bert_tf.export_saved_model", [argv for argv, _ in cases]
  )
  for (argv, message), (code, stderr) in zip(cases, results):
    lines = [l for l in stderr.splitlines() if l.startswith("ERROR: ")]
    assert code == 1 and len(lines) == 1, (argv, stderr[-1000:])
    assert message in lines[0], (argv, lines[0])
  assert not (tmp_path / "sm").exists()
  assert not [p for p in tmp_path.iterdir() if p.name.startswith(".export")]
