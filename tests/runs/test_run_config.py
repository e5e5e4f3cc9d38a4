"""run_config.json: written once, read back, another model refused in one
line naming both values, training-only changes reported, damaged files
named."""

import json
import os

import pytest

from bert_tf.io_utils import InputError
from bert_tf.runs import run_config


@pytest.fixture(autouse=True)
def _vocab(tmp_path, monkeypatch):
  """A vocabulary in the working directory, named as the settings name it."""
  monkeypatch.chdir(tmp_path)
  (tmp_path / "vocab.txt").write_text("[CLS]\n[SEP]\nhello\n")


def _settings(**changes):
  fields = dict(
    task="classifier",
    head={"labels": ["0", "1"]},
    tokenizer=run_config.tokenizer_settings("vocab.txt", True, None),
    max_seq_length=128,
    bert_config={"hidden_size": 64},
    training={"learning_rate": 2e-5},
  )
  fields.update(changes)
  return run_config.RunConfig(**fields)


def test_written_once_and_read_back(tmp_path):
  run = tmp_path / "run"
  run.mkdir()
  (run / "notes.txt").write_text("the user's")
  assert run_config.read(str(run)) is None
  assert run_config.check_or_write(str(run), _settings()) == {}
  data = json.loads((run / run_config.FILE).read_text())
  assert data["format"] == "bert_tf.run_config" and data["version"] == 2
  # The run's own copies, named relative to the folder.
  assert data["tokenizer"]["vocab_file"] == "vocab.txt"
  assert data["bert_config_file"] == "bert_config.json"
  assert (run / "vocab.txt").read_bytes() == b"[CLS]\n[SEP]\nhello\n"
  assert json.loads((run / "bert_config.json").read_text()) == {
    "hidden_size": 64
  }
  assert data["kept"] == ["notes.txt"]  # what the folder held before
  assert run_config.read(str(run)) == _settings(
    tokenizer={
      "vocab_file": "vocab.txt",
      "spm_model_file": None,
      "do_lower_case": True,
    },
    bert_config_file="bert_config.json",
    kept=["notes.txt"],
  )


def test_the_same_model_with_other_training_settings_is_reported(tmp_path):
  run = str(tmp_path / "run")
  os.mkdir(run)
  run_config.check_or_write(run, _settings())
  changed = run_config.check_or_write(
    run, _settings(training={"learning_rate": 5e-5}, max_seq_length=64)
  )
  assert changed == {"learning_rate": (2e-5, 5e-5)}
  # The record keeps the first run's settings.
  assert run_config.read(run).training == {"learning_rate": 2e-5}


@pytest.mark.parametrize(
  "changes,message",
  [
    (
      {"head": {"labels": ["1", "0"]}},
      "head.labels=['0', '1'], this command asks for ['1', '0']",
    ),
    ({"task": "ner"}, "task=classifier, this command asks for ner"),
    (
      {"bert_config": {"hidden_size": 128}},
      "bert_config.hidden_size=64, this command asks for 128",
    ),
    (
      {"tokenizer": run_config.tokenizer_settings("vocab.txt", False, None)},
      "do_lower_case=True, this command asks for False",
    ),
  ],
)
def test_another_model_is_refused_naming_both_values(
  tmp_path, changes, message
):
  run = tmp_path / "run"
  run.mkdir()
  run_config.check_or_write(str(run), _settings())
  with pytest.raises(InputError) as e:
    run_config.check_or_write(str(run), _settings(**changes))
  assert str(e.value) == (
    "--output_dir=%s holds a model with %s; use --overwrite_output_dir to "
    "start over, or another --output_dir" % (run, message)
  )


@pytest.mark.parametrize(
  "content,message",
  [
    (b"{not json", "not JSON"),
    (b"\xff\xfe", "not UTF-8 text"),
    (b'{"format": "other"}', "not a bert_tf run config"),
    (b'{"format": "bert_tf.run_config", "version": 7}', "version 7"),
    (b'{"format": "bert_tf.run_config", "version": 1, "task": "x"}', "missing"),
    (b'{"format": "bert_tf.run_config", "version": 2, "task": "x"}', "missing"),
  ],
)
def test_a_damaged_file_is_named(tmp_path, content, message):
  (tmp_path / run_config.FILE).write_bytes(content)
  with pytest.raises(InputError) as e:
    run_config.read(str(tmp_path))
  assert str(e.value).startswith(str(tmp_path / run_config.FILE))
  assert message in str(e.value)
