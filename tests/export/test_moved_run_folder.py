"""A run folder carries its own vocabulary and model config: moved and
copied away, with the vocabulary it was trained from deleted and the
vocabulary of the folder it was copied from replaced, it exports a
SavedModel that predicts what run_classifier.py predicted before the
move (its test_results.tsv)."""

import json
import shutil

import pytest

from tests.conftest import FIXTURES
from tests.helpers.checkpoints import ckpt_prefix
from tests.helpers.cli import run_cases

ENCODER = FIXTURES / "encoder"


@pytest.mark.process
def test_a_moved_and_copied_run_folder_exports_and_predicts_the_same(
  tmp_path,
):
  models = tmp_path / "models"
  models.mkdir()
  shutil.copy(ENCODER / "vocab_small.txt", models / "vocab.txt")
  shutil.copy(ENCODER / "ckpt_b" / "bert_config.json", models)
  mrpc = FIXTURES / "glue" / "MRPC"
  run = tmp_path / "run"
  ((code, stderr),) = run_cases(
    [
      (
        "run_classifier",
        [
          "--task_name=MRPC",
          "--do_train",
          "--do_predict",
          "--data_dir=%s" % mrpc,
          "--output_dir=%s" % run,
          "--vocab_file=%s" % (models / "vocab.txt"),
          "--bert_config_file=%s" % (models / "bert_config.json"),
          "--init_checkpoint=%s" % ckpt_prefix("ckpt_b"),
          "--do_lower_case=False",
          "--max_seq_length=32",
          "--train_batch_size=2",
          "--num_train_epochs=1",
          "--learning_rate=1e-3",
          "--save_checkpoints_steps=0",
          "--noprogress",
        ],
      )
    ]
  )
  assert code == 0, stderr[-3000:]
  moved = tmp_path / "elsewhere" / "moved"
  shutil.move(str(run), str(moved))
  shutil.rmtree(models)  # the vocabulary and config it was trained with
  copy = tmp_path / "copy"
  shutil.copytree(moved, copy)
  (moved / "vocab.txt").write_bytes(
    (FIXTURES / "vocab_uncased.txt").read_bytes()
  )
  rows = [r.split("\t") for r in (mrpc / "test.tsv").read_text().splitlines()]
  (tmp_path / "pairs.jsonl").write_text(
    "".join(
      json.dumps({"text_a": r[3], "text_b": r[4]}) + "\n" for r in rows[1:]
    )
  )
  export_dir = tmp_path / "sm"
  outcomes = run_cases(
    [
      (
        "bert_tf.export_saved_model",
        ["--checkpoint=%s" % copy, "--export_dir=%s" % export_dir],
      ),
      (
        "bert_tf.predict",
        [
          "--export_dir=%s" % export_dir,
          "--input_file=%s" % (tmp_path / "pairs.jsonl"),
          "--output_file=%s" % (tmp_path / "predictions.jsonl"),
          "--noprogress",
        ],
      ),
    ]
  )
  assert [code for code, _ in outcomes] == [0, 0], outcomes
  got = [
    json.loads(line)["probabilities"]
    for line in (tmp_path / "predictions.jsonl").read_text().splitlines()
  ]
  expected = [
    [float(p) for p in line.split("\t")]
    for line in (copy / "test_results.tsv").read_text().splitlines()
  ]
  assert len(got) == len(expected) == len(rows) - 1
  for row, want in zip(got, expected):
    assert row == pytest.approx(want, abs=1e-5)
