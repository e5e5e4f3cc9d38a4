"""Classifier SavedModel vs run_classifier.py: the exported model, loaded in
a process without bert_tf, gives test_results.tsv's probabilities for the
same raw rows; TF1-checkpoint export, regression and labels-file models vs
the Keras model on data_prep's features; the label table matches data_prep."""

import os
import subprocess
import sys

import numpy as np
import pytest

from bert_tf.export.classifier import TASK_LABELS
from bert_tf.tasks.classification import ClassifierModel
from bert_tf.tokenizers.tokenization import FullTokenizer
from data_prep.classifier import tasks as classifier_tasks
from data_prep.classifier.example import InputExample
from data_prep.classifier.features import convert_single_example
from data_prep.classifier.tasks import get_processor
from tests.conftest import FIXTURES
from tests.conftest import REPO
from tests.export.standalone import export
from tests.export.standalone import serve
from tests.helpers.checkpoints import ckpt_prefix

ENCODER = FIXTURES / "encoder"
VOCAB = str(ENCODER / "vocab_small.txt")
CONFIG_B = str(ENCODER / "ckpt_b" / "bert_config.json")
# Rows beyond the fixture's: accents and case, CJK, control characters, a
# text truncated at max_seq_length, an empty second text.
EXTRA_ROWS = [
  ("Café RÉSUMÉ naïve", "Übermäßig ﬁne ²"),
  ("北京 is in 中国.", "Tab\tand\u00a0nbsp\u200b here"),
  ("word " * 40, "a short one"),
  ("only the first text", ""),
]


def _mrpc_dir(tmp_path):
  """MRPC train.tsv, and a test.tsv of every fixture sentence pair."""
  data_dir = tmp_path / "mrpc"
  data_dir.mkdir()
  src = FIXTURES / "glue" / "MRPC"
  (data_dir / "train.tsv").write_bytes((src / "train.tsv").read_bytes())
  pairs = []
  for name in ("train.tsv", "dev.tsv", "test.tsv"):
    rows = (src / name).read_text(encoding="utf-8-sig").splitlines()[1:]
    pairs += [tuple(r.split("\t")[3:5]) for r in rows]
  lines = ["index\t#1 ID\t#2 ID\t#1 String\t#2 String"]
  lines += [
    "%d\t%d\t%d\t%s\t%s" % (i, i, i, a, b)
    for i, (a, b) in enumerate(pairs + EXTRA_ROWS)
  ]
  (data_dir / "test.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
  return data_dir


@pytest.fixture(scope="module")
def mrpc_run(tmp_path_factory):
  """A run_classifier.py run (train + predict) on the tiny checkpoint."""
  tmp_path = tmp_path_factory.mktemp("mrpc_run")
  data_dir = _mrpc_dir(tmp_path)
  output_dir = tmp_path / "output"
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
  result = subprocess.run(
    [
      sys.executable,
      "run_classifier.py",
      "--task_name=MRPC",
      "--data_dir=%s" % data_dir,
      "--output_dir=%s" % output_dir,
      "--vocab_file=%s" % VOCAB,
      "--bert_config_file=%s" % CONFIG_B,
      "--init_checkpoint=%s" % ckpt_prefix("ckpt_b"),
      "--max_seq_length=32",
      "--do_train",
      "--do_predict",
      "--train_batch_size=2",
      "--num_train_epochs=1",
      "--learning_rate=1e-3",
      "--save_checkpoints_steps=0",
    ],
    cwd=REPO,
    env=env,
    capture_output=True,
    text=True,
    timeout=300,
    check=False,
  )
  assert result.returncode == 0, result.stderr[-3000:]
  return data_dir, output_dir


@pytest.mark.process
def test_probabilities_match_run_classifier(mrpc_run, tmp_path):
  data_dir, output_dir = mrpc_run
  export_dir = export(
    tmp_path,
    "mrpc_sm",
    "--task=classifier",
    "--task_name=mrpc",
    "--checkpoint=%s" % output_dir,
    "--bert_config_file=%s" % CONFIG_B,
    "--vocab_file=%s" % VOCAB,
    "--max_seq_length=32",
  )
  examples = get_processor("mrpc", str(data_dir)).get_examples("test")
  request = {
    "text_a": [e.text_a for e in examples],
    "text_b": [e.text_b or "" for e in examples],
  }
  (answer,) = serve(export_dir, [request])
  expected = [
    [float(p) for p in line.split("\t")]
    for line in (output_dir / "test_results.tsv").read_text().splitlines()
  ]
  assert len(answer["probabilities"]) == len(expected) == len(examples)
  for got, want in zip(answer["probabilities"], expected):
    assert got == pytest.approx(want, abs=1e-5)
    assert answer["label"][expected.index(want)] == str(want.index(max(want)))


@pytest.mark.process
def test_a_run_folder_exports_with_its_own_settings(mrpc_run, tmp_path):
  """run_config.json supplies task, labels, vocab, casing and length: the
  bare command gives run_classifier's probabilities; a contradicting flag
  is refused in one line and writes nothing."""
  _, output_dir = mrpc_run
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
  refused = subprocess.run(
    [
      sys.executable,
      "-m",
      "bert_tf.export_saved_model",
      "--checkpoint=%s" % output_dir,
      "--do_lower_case=False",
      "--export_dir=%s" % (tmp_path / "never"),
    ],
    cwd=REPO,
    env=env,
    capture_output=True,
    text=True,
    timeout=300,
    check=False,
  )
  assert refused.returncode == 1
  assert refused.stderr.splitlines()[-1] == (
    "ERROR: --do_lower_case=False contradicts the run in --checkpoint=%s "
    "(run_config.json: True); leave it out, or export another checkpoint"
    % output_dir
  )
  assert not (tmp_path / "never").exists()
  export_dir = export(tmp_path, "sm", "--checkpoint=%s" % output_dir)
  rows = [
    line.split("\t")[3:5]
    for line in (mrpc_run[0] / "test.tsv").read_text().splitlines()[1:6]
  ]
  (answer,) = serve(
    export_dir,
    [{"text_a": [a for a, _ in rows], "text_b": [b for _, b in rows]}],
  )
  expected = [
    [float(p) for p in line.split("\t")]
    for line in (output_dir / "test_results.tsv").read_text().splitlines()[:5]
  ]
  for got, want in zip(answer["probabilities"], expected):
    assert got == pytest.approx(want, abs=1e-5)


@pytest.mark.process
def test_tf1_checkpoint_and_single_text_signature(tmp_path):
  # ckpt_a holds a 3-label classifier head (output_weights [3, 64]).
  export_dir = export(
    tmp_path,
    "sm",
    "--task=classifier",
    "--labels=x,y,z",
    "--notext_b",
    "--checkpoint=%s" % ckpt_prefix("ckpt_a"),
    "--vocab_file=%s" % VOCAB,
    "--max_seq_length=16",
  )
  (answer, wrong) = serve(
    export_dir,
    [{"text_a": ["hello world", ""]}, {"text_a": ["a"], "text_b": ["b"]}],
  )
  assert len(answer["probabilities"]) == 2
  assert all(
    sum(p) == pytest.approx(1.0, abs=1e-6) for p in answer["probabilities"]
  )
  assert set(answer["label"]) <= {"x", "y", "z"}
  assert "error" in wrong  # no text_b in this signature


def test_task_label_table_matches_data_prep():
  for name, (labels, pairs) in TASK_LABELS.items():
    spec = classifier_tasks.TASKS[name]
    assert labels == spec.labels, name
    assert pairs == (spec.splits["test"].text_b is not None), name
  assert set(TASK_LABELS) == set(classifier_tasks.TASKS)


def _python_features(pairs):
  """Features by data_prep's Python path (FullTokenizer, original packing)."""
  tokenizer = FullTokenizer(VOCAB, do_lower_case=True)
  rows = [
    convert_single_example(
      InputExample(str(i), a, b or None, "0"), ["0"], 32, tokenizer
    )
    for i, (a, b) in enumerate(pairs)
  ]
  return {
    k: np.array([getattr(r, k) for r in rows], np.int32)
    for k in ("input_ids", "input_mask", "segment_ids")
  }


# Slow (~30 s on 2 cores); `make test-all` runs it.
@pytest.mark.process
@pytest.mark.slow
def test_regression_and_labels_file(tmp_path, head_checkpoint):
  pairs = EXTRA_ROWS + [("A man is playing a guitar.", "A man plays.")]
  request = {"text_a": [a for a, _ in pairs], "text_b": [b for _, b in pairs]}
  regression, prefix = head_checkpoint("ckpt_b", ClassifierModel, 1)
  export_dir = export(
    tmp_path,
    "stsb",
    "--task=classifier",
    "--regression",
    "--checkpoint=%s" % prefix,
    "--vocab_file=%s" % VOCAB,
    "--bert_config_file=%s" % CONFIG_B,
    "--max_seq_length=32",
  )
  (answer,) = serve(export_dir, [request])
  assert set(answer) == {"predictions"}
  want = regression(_python_features(pairs))["predictions"].numpy()
  np.testing.assert_allclose(answer["predictions"], want, atol=1e-5)

  labels_file = tmp_path / "labels.txt"
  labels_file.write_text("neg\nneu\npos\n")
  three, prefix = head_checkpoint("ckpt_b", ClassifierModel, 3)
  export_dir = export(
    tmp_path,
    "three",
    "--task=classifier",
    "--labels_file=%s" % labels_file,
    "--checkpoint=%s" % prefix,
    "--vocab_file=%s" % VOCAB,
    "--bert_config_file=%s" % CONFIG_B,
    "--max_seq_length=32",
  )
  (answer,) = serve(export_dir, [request])
  want = three(_python_features(pairs))["probabilities"].numpy()
  np.testing.assert_allclose(answer["probabilities"], want, atol=1e-5)
  assert answer["label"] == [["neg", "neu", "pos"][i] for i in want.argmax(-1)]
