"""Run folders carry their own tokenizer file and bert_config.json: moved or
copied they read the same files, older records (absolute paths) still read,
names never lead out of the folder; a user's file is never replaced; the
values of run_config.json are type-checked; --overwrite_output_dir removes
only what the run wrote and refuses to remove an input."""

import json
import os
import shutil

import pytest

from bert_tf.io_utils import InputError
from bert_tf.io_utils import LOCK_FILE
from bert_tf.runs import run_config

VOCAB = b"[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\n"
OTHER_VOCAB = b"[PAD]\n[UNK]\n[CLS]\n[SEP]\nworld\n"


def _settings(vocab, **changes):
  fields = dict(
    task="classifier",
    head={"labels": ["0", "1"]},
    tokenizer=run_config.tokenizer_settings(str(vocab), True, None),
    max_seq_length=16,
    bert_config={"hidden_size": 8, "max_position_embeddings": 32},
  )
  fields.update(changes)
  return run_config.RunConfig(**fields)


@pytest.fixture
def vocab(tmp_path):
  path = tmp_path / "models" / "vocab.txt"
  path.parent.mkdir()
  path.write_bytes(VOCAB)
  return path


def _run(tmp_path, vocab, name="run"):
  folder = tmp_path / name
  folder.mkdir()
  run_config.check_or_write(str(folder), _settings(vocab))
  return folder


def _vocab_of(folder):
  settings = run_config.read(str(folder))
  return run_config.tokenizer_files(str(folder), settings)["vocab_file"]


def test_a_moved_run_folder_reads_its_own_vocabulary(tmp_path, vocab):
  run = _run(tmp_path, vocab)
  moved = tmp_path / "elsewhere" / "run"
  shutil.move(str(run), str(moved))
  vocab.unlink()  # the original vocabulary is gone
  assert _vocab_of(moved) == str(moved / "vocab.txt")
  with open(_vocab_of(moved), "rb") as f:
    assert f.read() == VOCAB


def test_a_copied_run_folder_keeps_its_vocabulary(tmp_path, vocab):
  run = _run(tmp_path, vocab)
  copy = tmp_path / "copy"
  shutil.copytree(run, copy)
  (run / "vocab.txt").write_bytes(OTHER_VOCAB)  # the original's replaced
  with open(_vocab_of(copy), "rb") as f:
    assert f.read() == VOCAB


def _old_record(folder, vocab_path):
  """A version 1 record: the vocabulary by absolute path."""
  folder.mkdir(exist_ok=True)
  record = _settings(vocab_path).to_json()
  record.update(version=1, tokenizer=dict(record["tokenizer"]))
  del record["bert_config_file"], record["kept"]
  (folder / run_config.FILE).write_text(json.dumps(record))


def test_an_older_record_with_absolute_paths_still_reads(tmp_path, vocab):
  old = tmp_path / "old"
  _old_record(old, vocab)
  assert _vocab_of(old) == str(vocab)  # the recorded file
  assert run_config.read(str(old)).kept is None
  # A save_run folder of then: its own copy, recorded where it was saved.
  saved = tmp_path / "saved"
  _old_record(saved, tmp_path / "gone" / "vocab.txt")
  (saved / "vocab.txt").write_bytes(VOCAB)
  assert _vocab_of(saved) == str(saved / "vocab.txt")


def test_an_older_record_never_silently_reads_another_vocabulary(
  tmp_path, vocab
):
  original = tmp_path / "original"
  _old_record(original, original / "vocab.txt")
  (original / "vocab.txt").write_bytes(VOCAB)
  copy = tmp_path / "copy"
  shutil.copytree(original, copy)
  (original / "vocab.txt").write_bytes(OTHER_VOCAB)
  with pytest.raises(InputError) as e:
    _vocab_of(copy)
  assert str(e.value) == (
    "%s: vocab_file=%s differs from the run folder's own vocab.txt; write "
    '"vocab.txt" there to use the folder\'s copy'
    % (copy / run_config.FILE, original / "vocab.txt")
  )
  moved = tmp_path / "moved"
  _old_record(moved, tmp_path / "gone" / "vocab.txt")
  with pytest.raises(InputError, match="the run folder was moved away from"):
    _vocab_of(moved)


@pytest.mark.parametrize("name", ["../models/vocab.txt", "link.txt"])
def test_a_name_never_leads_out_of_the_folder(tmp_path, vocab, name):
  run = _run(tmp_path, vocab)
  os.symlink(vocab, run / "link.txt")
  record = json.loads((run / run_config.FILE).read_text())
  record["tokenizer"]["vocab_file"] = name
  (run / run_config.FILE).write_text(json.dumps(record))
  with pytest.raises(InputError) as e:
    _vocab_of(run)
  assert str(e.value) == "%s: vocab_file=%s leads out of the run folder" % (
    run / run_config.FILE,
    name,
  )


def test_a_file_of_the_user_is_never_replaced(tmp_path, vocab):
  run = tmp_path / "run"
  run.mkdir()
  (run / "vocab.txt").write_bytes(OTHER_VOCAB)
  with pytest.raises(InputError) as e:
    run_config.check_or_write(str(run), _settings(vocab))
  assert str(e.value) == (
    "--output_dir=%s holds a vocab.txt that is not the run's "
    "--vocab_file=%s: move it away, or use another --output_dir" % (run, vocab)
  )
  assert sorted(os.listdir(run)) == ["vocab.txt"]  # nothing written
  assert (run / "vocab.txt").read_bytes() == OTHER_VOCAB
  # The input itself inside the folder is the run's own file, and so is a
  # config file of the same model (the keys it leaves out at defaults).
  (run / "vocab.txt").write_bytes(VOCAB)
  (run / "bert_config.json").write_text('{"hidden_size": 8}')
  run_config.check_or_write(str(run), _settings(run / "vocab.txt"))
  settings = run_config.read(str(run))
  assert settings.kept == ["bert_config.json", "vocab.txt"]
  assert settings.bert_config_file == "bert_config.json"
  assert (run / "bert_config.json").read_text() == '{"hidden_size": 8}'


def test_a_resumed_run_with_another_vocabulary_is_refused(tmp_path, vocab):
  run = _run(tmp_path, vocab)
  other = tmp_path / "other.txt"
  other.write_bytes(OTHER_VOCAB)
  with pytest.raises(InputError) as e:
    run_config.check_or_write(str(run), _settings(other))
  assert str(e.value) == (
    "--output_dir=%s holds a model with tokenizer.vocab_file=vocab.txt, "
    "this command asks for %s (other contents); use --overwrite_output_dir "
    "to start over, or another --output_dir" % (run, other)
  )
  same = tmp_path / "same.txt"
  same.write_bytes(VOCAB)
  assert run_config.check_or_write(str(run), _settings(same)) == {}
  # A command naming no vocabulary (run_pretraining.py --do_eval) uses the
  # run's own; a SentencePiece model instead is another tokenizer.
  none = run_config.tokenizer_settings(None, True, None)
  assert (
    run_config.check_or_write(str(run), _settings(None, tokenizer=none)) == {}
  )
  spm = run_config.tokenizer_settings(None, True, str(other))
  with pytest.raises(InputError, match="tokenizer.spm_model_file=None"):
    run_config.check_or_write(str(run), _settings(None, tokenizer=spm))


@pytest.mark.parametrize(
  "key,value,message",
  [
    (
      "tokenizer.do_lower_case",
      "false",
      "tokenizer.do_lower_case must be true, false or null, not 'false'",
    ),
    (
      "max_seq_length",
      "abc",
      "max_seq_length must be a whole number >= 1, not 'abc'",
    ),
    ("max_seq_length", True, "max_seq_length must be a whole number >= 1"),
    (
      "max_seq_length",
      64,
      "max_seq_length 64 is longer than the model's max_position_embeddings 32",
    ),
    ("head.labels", [0, 1], "head.labels must be a list of strings or null"),
    ("head", [], "head must be a JSON object, not []"),
    ("task", 3, "task must be a string, not 3"),
    ("tokenizer.vocab_file", 7, "tokenizer.vocab_file must be a string"),
    ("sequence.doc_stride", 0, "sequence.doc_stride must be a whole number"),
    ("training.learning_rate", "fast", "training.learning_rate must be a"),
    ("kept", "data", "kept must be a list of strings or null, not 'data'"),
  ],
)
def test_every_value_read_is_type_checked(tmp_path, vocab, key, value, message):
  run = _run(tmp_path, vocab)
  record = json.loads((run / run_config.FILE).read_text())
  *parents, last = key.split(".")
  target = record
  for part in parents:
    target = target.setdefault(part, {})
  target[last] = value
  (run / run_config.FILE).write_text(json.dumps(record))
  with pytest.raises(InputError) as e:
    run_config.read(str(run))
  assert str(e.value).startswith("%s: %s" % (run / run_config.FILE, message))
  assert "\n" not in str(e.value)


def _with_outputs(run):
  """A run's outputs beside what the folder held before it."""
  (run / "ckpt-1.index").write_text("x")
  (run / "checkpoint").write_text("x")
  (run / "best").mkdir()
  (run / "best" / "best.json").write_text("{}")
  (run / LOCK_FILE).write_text("pid")


def test_overwrite_removes_only_what_the_run_wrote(tmp_path, vocab):
  run = tmp_path / "run"
  (run / "data").mkdir(parents=True)
  (run / "data" / "train.tsv").write_text("rows")
  run_config.check_or_write(str(run), _settings(vocab))
  _with_outputs(run)
  run_config.clear(str(run), {"data_dir": str(run / "data")})
  assert sorted(os.listdir(run)) == [LOCK_FILE, "data"]
  assert (run / "data" / "train.tsv").read_text() == "rows"


@pytest.mark.parametrize(
  "flag,path",
  [
    ("vocab_file", "vocab.txt"),  # the run's own copy
    ("init_checkpoint", "ckpt-1"),  # a prefix of the run's checkpoint
    ("init_checkpoint", "best"),
    ("init_checkpoint", "."),  # the run folder itself
  ],
)
def test_overwrite_refuses_to_remove_an_input(tmp_path, vocab, flag, path):
  run = _run(tmp_path, vocab)
  _with_outputs(run)
  before = sorted(os.listdir(run))
  value = os.path.normpath(str(run / path))
  with pytest.raises(InputError) as e:
    run_config.clear(str(run), {flag: value, "data_dir": str(tmp_path)})
  assert str(e.value) == (
    "--%s=%s is inside --output_dir=%s, which --overwrite_output_dir would "
    "clear: move it out, or use another --output_dir" % (flag, value, run)
  )
  assert sorted(os.listdir(run)) == before


def test_overwrite_of_an_older_record_clears_all_but_inputs(tmp_path, vocab):
  old = tmp_path / "old"
  _old_record(old, vocab)
  (old / "notes.txt").write_text("x")
  with pytest.raises(InputError, match="--bert_config_file="):
    run_config.clear(str(old), {"bert_config_file": str(old / "notes.txt")})
  run_config.clear(str(old), {"vocab_file": str(vocab)})
  assert os.listdir(old) == []


def test_overwrite_of_a_folder_without_a_record(tmp_path):
  folder = tmp_path / "plain"
  folder.mkdir()
  (folder / "notes.txt").write_text("x")
  run_config.clear(str(folder), {})
  assert os.listdir(folder) == ["notes.txt"]  # no run wrote it
  (folder / "checkpoint").write_text("x")
  with pytest.raises(InputError, match="holds checkpoints but no run_config"):
    run_config.clear(str(folder), {})
