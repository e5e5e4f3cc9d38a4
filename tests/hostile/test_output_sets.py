"""Output sets (issue class 5): a run's prediction files are published
together or not at all, an older set's leftover members are removed, and a
killed run's temp files are cleaned at the next start on that folder."""

import os

import pytest

from bert_tf.io_utils import atomic_output
from bert_tf.io_utils import InputError
from bert_tf.io_utils import output_set
from tests.helpers.processes import finish
from tests.helpers.processes import run
from tests.helpers.scripts import CLASSIFIER_EVAL
from tests.helpers.scripts import NER_DATA
from tests.helpers.scripts import start_run

_SET = ("raw.jsonl", "predictions.json", "eval.json")


def _write(folder, name, text):
  with atomic_output(str(folder / name)) as f:
    f.write(text)


def test_a_set_is_published_whole_and_replaces_the_older_one(tmp_path):
  for name in _SET:
    (tmp_path / name).write_text("old")
  (tmp_path / "other.txt").write_text("not in the set")
  with output_set(str(tmp_path), _SET):
    _write(tmp_path, "raw.jsonl", "new")
    # Not renamed yet: a reader still sees the old set only.
    assert (tmp_path / "raw.jsonl").read_text() == "old"
    _write(tmp_path, "predictions.json", "new")
    _write(tmp_path, "elsewhere.txt", "not in the set: written at once")
    assert (tmp_path / "elsewhere.txt").read_text().startswith("not")
  # eval.json (not written this time) described the old predictions.
  assert sorted(os.listdir(tmp_path)) == [
    "elsewhere.txt",
    "other.txt",
    "predictions.json",
    "raw.jsonl",
  ]
  assert (tmp_path / "raw.jsonl").read_text() == "new"


def test_a_failed_set_leaves_the_older_one_untouched(tmp_path):
  for name in _SET:
    (tmp_path / name).write_text("old")
  with pytest.raises(InputError, match="disk full"):
    with output_set(str(tmp_path), _SET):
      _write(tmp_path, "raw.jsonl", "new")
      raise InputError("disk full")  # e.g. while writing predictions.json
  assert sorted(os.listdir(tmp_path)) == sorted(_SET)
  assert all((tmp_path / name).read_text() == "old" for name in _SET)


@pytest.mark.process
def test_run_ner_never_keeps_results_of_other_predictions(tmp_path):
  # Labelled test file: test_predictions.txt + test_results.txt.
  process = start_run(
    "run_ner.py",
    tmp_path,
    "--data_dir=%s" % NER_DATA,
    "--do_predict",
    "--labels=O,B-PER,I-PER,B-LOC,I-LOC,B-ORG,I-ORG,B-MISC,I-MISC",
  )
  finish(process)
  assert (tmp_path / "test_results.txt").exists()
  # Words only: the old scores would describe predictions no longer there.
  process = start_run(
    "run_ner.py",
    tmp_path,
    "--predict_file=%s" % (NER_DATA / "test_words.txt"),
    "--do_predict",
    "--labels=O,B-PER,I-PER,B-LOC,I-LOC,B-ORG,I-ORG,B-MISC,I-MISC",
  )
  finish(process)
  assert (tmp_path / "test_predictions.txt").exists()
  assert not (tmp_path / "test_results.txt").exists()


@pytest.mark.process
def test_a_killed_runs_temp_files_are_cleaned_at_the_next_start(
  tmp_path, flipped_data
):
  folder = tmp_path / "out"
  folder.mkdir()
  stale = [
    "eval_results.txt.tmp-0123abcd",
    "pt.tfrecord-00000-of-00002.tmp-shard",
  ]
  for name in stale:
    (folder / name).write_text("left by a killed run")
  (folder / "ckpt-4_temp").mkdir()
  (folder / "ckpt-4_temp" / "part-00000-of-00001").write_text("half")
  (folder / "notes.tmp").write_text("the user's")
  result = run(
    [
      "run_classifier.py",
      "--output_dir=%s" % folder,
      "--data_dir=%s" % flipped_data,
      "--num_train_epochs=1",
    ]
    + [
      a
      for a in CLASSIFIER_EVAL
      if not a.startswith(("--eval_every", "--best", "--early", "--num_train"))
    ]
  )
  assert result.returncode == 0, result.stderr[-3000:]
  names = os.listdir(folder)
  assert not [n for n in names if n in stale or n == "ckpt-4_temp"]
  assert "notes.tmp" in names and "ckpt-4.index" in names
