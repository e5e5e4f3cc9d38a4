"""run_classifier.py --overwrite_output_dir never deletes an input: the
vocabulary, model config and data the user keeps inside --output_dir
survive any number of runs that start over there, and an input the clear
would remove (the run's own checkpoint, or anything in a folder recorded
before runs listed their own files) is refused in one line naming its
flag, with nothing removed."""

import json
import shutil

import pytest

from bert_tf.runs import run_config
from tests.conftest import FIXTURES
from tests.helpers.checkpoints import ckpt_prefix
from tests.helpers.cli import run_mains

ENCODER = FIXTURES / "encoder"


def _user_folder(folder):
  """A folder holding the user's vocabulary, config and data."""
  shutil.copytree(FIXTURES / "glue" / "MRPC", folder / "data")
  shutil.copy(ENCODER / "vocab_small.txt", folder / "vocab.txt")
  shutil.copy(ENCODER / "ckpt_b" / "bert_config.json", folder)
  return {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def _argv(folder, *extra):
  return [
    "--task_name=MRPC",
    "--do_train",
    "--overwrite_output_dir",
    "--output_dir=%s" % folder,
    "--vocab_file=%s" % (folder / "vocab.txt"),
    "--bert_config_file=%s" % (folder / "bert_config.json"),
    "--data_dir=%s" % (folder / "data"),
    "--max_seq_length=32",
    "--train_batch_size=2",
    "--num_train_epochs=1",
    "--save_checkpoints_steps=0",
    "--noprogress",
  ] + list(extra)


@pytest.mark.process
def test_overwrite_output_dir_never_deletes_inputs(tmp_path):
  run = tmp_path / "run"
  inputs = _user_folder(run)
  init = "--init_checkpoint=%s" % ckpt_prefix("ckpt_b")
  # A folder recorded before runs listed their own files.
  old = tmp_path / "old"
  old_inputs = _user_folder(old)
  record = run_config.RunConfig(
    "classifier", {}, {"do_lower_case": True}, 32, {}
  ).to_json()
  record.update(version=1)
  del record["kept"], record["bert_config_file"]
  (old / run_config.FILE).write_text(json.dumps(record))
  (first, again, own_checkpoint, older), _ = run_mains(
    "run_classifier",
    [
      _argv(run, init),
      _argv(run, init),
      _argv(run, "--init_checkpoint=%s" % (run / "ckpt-3")),
      _argv(old, init),
    ],
  )
  assert first[0] == 0, first[1][-3000:]
  assert again[0] == 0, again[1][-3000:]
  assert {p: p.read_bytes() for p in inputs} == inputs
  settings = run_config.read(str(run))
  assert settings.tokenizer["vocab_file"] == "vocab.txt"  # the input itself
  assert settings.kept == ["bert_config.json", "data", "vocab.txt"]
  assert (run / "ckpt-3.index").exists()
  assert own_checkpoint == (
    1,
    "ERROR: --init_checkpoint=%s is inside --output_dir=%s, which "
    "--overwrite_output_dir would clear: move it out, or use another "
    "--output_dir\n" % (run / "ckpt-3", run),
  )
  assert (run / "ckpt-3.index").exists()
  assert older == (
    1,
    "ERROR: --bert_config_file=%s is inside --output_dir=%s, which "
    "--overwrite_output_dir would clear: move it out, or use another "
    "--output_dir\n" % (old / "bert_config.json", old),
  )
  assert {p: p.read_bytes() for p in old_inputs} == old_inputs
