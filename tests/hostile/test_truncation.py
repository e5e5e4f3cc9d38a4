"""Class 4 (truncation read as the end): TensorFlow's reader takes a TFRecord
file cut inside a record header for a shorter file, so a run trained on half
its data and exited 0. Every command that takes --train_records walks the
framing first and refuses a cut or damaged file in one line."""

import pytest

from bert_tf.records import tfrecord_file
from tests.conftest import FIXTURES
from tests.helpers.checkpoints import ENCODER_DIR
from tests.helpers.checkpoints import VOCAB
from tests.helpers.cli import assert_one_error
from tests.helpers.cli import run_cases
from tests.helpers.scripts import classifier_args

_RECORDS = [b"a" * 30, b"b" * 50, b"c" * 20]
_WHOLE = tfrecord_file.frame_records(_RECORDS)
_SECOND = 12 + 30 + 4  # where record 2 starts


def _damaged(kind):
  """The framed records, damaged as `kind` says."""
  if kind == "cut_in_header":
    return _WHOLE[: _SECOND + 5]
  if kind == "cut_in_data":
    return _WHOLE[: _SECOND + 12 + 10]
  raw = bytearray(_WHOLE)
  raw[_SECOND] ^= 0x01  # record 2's length no longer matches its checksum
  return bytes(raw)


@pytest.mark.parametrize(
  "kind,count,problem",
  [
    ("cut_in_header", 1, "cut inside the header of record 2 (byte 46 of 51"),
    (
      "cut_in_data",
      1,
      "cut inside record 2 (it needs 112 bytes, the file has 68",
    ),
    ("bad_length", 1, "record 2 has a damaged length (byte 46)"),
  ],
)
def test_framing_walk(tmp_path, kind, count, problem):
  path = tmp_path / "r.tfrecord"
  path.write_bytes(_WHOLE)
  assert tfrecord_file.check_framing(str(path)) == (3, None)
  path.write_bytes(_damaged(kind))
  found, message = tfrecord_file.check_framing(str(path))
  assert found == count and message.startswith(problem), message


@pytest.mark.process
def test_every_train_records_command_refuses_a_cut_file(
  tmp_path, defined_flags
):
  cut = tmp_path / "train.tf_record-00001-of-00002"
  cut.write_bytes(_damaged("cut_in_header"))
  whole = tmp_path / "train.tf_record-00000-of-00002"
  whole.write_bytes(_WHOLE)
  records = "--train_records=%s" % (tmp_path / "train.tf_record-*")
  model = [
    "--vocab_file=" + VOCAB,
    "--do_train",
    records,
    "--bert_config_file=%s" % (ENCODER_DIR / "ckpt_b" / "bert_config.json"),
  ]
  table = {
    "run_classifier": classifier_args(tmp_path / "c") + ["--do_train", records],
    "run_squad": model + ["--output_dir=%s" % (tmp_path / "s")],
    "run_ner": model
    + [
      "--data_dir=%s" % (FIXTURES / "ner"),
      "--labels=O,B-PER,I-PER",
      "--output_dir=%s" % (tmp_path / "n"),
    ],
    "run_multiple_choice": model
    + [
      "--data_dir=%s" % (FIXTURES / "swag"),
      "--output_dir=%s" % (tmp_path / "m"),
    ],
  }
  takers = sorted(e for e, f in defined_flags.items() if "train_records" in f)
  assert sorted(table) == takers  # a new command needs a row here
  outcomes = run_cases([(e, table[e]) for e in takers])
  for entry, outcome in zip(takers, outcomes):
    assert_one_error(
      outcome,
      "--train_records",
      str(cut),
      "cut inside the header of record 2",
      name=entry,
    )
