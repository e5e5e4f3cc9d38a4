"""run_config.json: written once, read back, another model refused in one
line naming both values, training-only changes reported, damaged files
named."""

import json

import pytest

from bert_tf.io_utils import InputError
from bert_tf.training import run_config


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
  assert run_config.read(str(tmp_path)) is None
  assert run_config.check_or_write(str(tmp_path), _settings()) == {}
  data = json.loads((tmp_path / run_config.FILE).read_text())
  assert data["format"] == "bert_tf.run_config" and data["version"] == 1
  assert data["tokenizer"]["vocab_file"].endswith("/vocab.txt")
  assert data["tokenizer"]["vocab_file"].startswith("/")  # absolute
  assert run_config.read(str(tmp_path)) == _settings()


def test_the_same_model_with_other_training_settings_is_reported(tmp_path):
  run_config.check_or_write(str(tmp_path), _settings())
  changed = run_config.check_or_write(
    str(tmp_path),
    _settings(training={"learning_rate": 5e-5}, max_seq_length=64),
  )
  assert changed == {"learning_rate": (2e-5, 5e-5)}
  # The record keeps the first run's settings.
  assert run_config.read(str(tmp_path)).training == {"learning_rate": 2e-5}


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
  run_config.check_or_write(str(tmp_path), _settings())
  with pytest.raises(InputError) as e:
    run_config.check_or_write(str(tmp_path), _settings(**changes))
  assert str(e.value) == (
    "--output_dir=%s holds a model with %s; use --overwrite_output_dir to "
    "start over, or another --output_dir" % (tmp_path, message)
  )


@pytest.mark.parametrize(
  "content,message",
  [
    (b"{not json", "not JSON"),
    (b"\xff\xfe", "not UTF-8 text"),
    (b'{"format": "other"}', "not a bert_tf run config"),
    (b'{"format": "bert_tf.run_config", "version": 7}', "version 7"),
    (b'{"format": "bert_tf.run_config", "version": 1, "task": "x"}', "missing"),
  ],
)
def test_a_damaged_file_is_named(tmp_path, content, message):
  (tmp_path / run_config.FILE).write_bytes(content)
  with pytest.raises(InputError) as e:
    run_config.read(str(tmp_path))
  assert str(e.value).startswith(str(tmp_path / run_config.FILE))
  assert message in str(e.value)
