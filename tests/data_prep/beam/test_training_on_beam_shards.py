"""The training scripts on Beam shards: run_classifier.py, run_squad.py,
run_ner.py and run_multiple_choice.py train on the shards a Beam driver
(`--runner=DirectRunner`) writes, as on the single-process file."""

import gzip
import os

import pytest

from tests.conftest import FIXTURES
from tests.helpers.processes import run

pytestmark = pytest.mark.process  # starts programs


def _run(module, *args):
  return run(["-m", module, *args])


def _ok(result):
  assert result.returncode == 0, result.stderr[-3000:]


def _shards(prefix):
  return sorted(prefix.parent.glob(prefix.name + "-*"))


def test_run_classifier_trains_on_beam_shards(tmp_path):
  rows = ["neg\tthe bad day", "pos\tthe good day"] * 8
  (tmp_path / "train.tsv").write_text("\n".join(rows) + "\n")
  encoder = FIXTURES / "encoder"
  common = [
    "--task_name=tsv",
    "--label_column=0",
    "--text_a_column=1",
    "--labels=neg,pos",
    "--max_seq_length=16",
    "--vocab_file=%s" % (encoder / "vocab_small.txt"),
  ]
  _ok(
    _run(
      "data_prep.classifier",
      *common,
      "--data_dir=%s" % tmp_path,
      "--output_file=%s" % (tmp_path / "train.tf_record"),
      "--runner=DirectRunner",
      "--num_output_shards=2",
    )
  )
  os.remove(tmp_path / "train.tsv")  # the shards are all there is
  train = [
    "run_classifier.py",
    *common,
    "--do_train",
    "--data_dir=%s" % tmp_path,
    "--bert_config_file=%s" % (encoder / "ckpt_b" / "bert_config.json"),
    "--output_dir=%s" % (tmp_path / "out"),
    "--train_batch_size=4",
    "--num_train_epochs=2",
    "--save_checkpoints_steps=0",
  ]
  _ok(run(train + ["--train_records=%s" % (tmp_path / "train.tf_record-*")]))
  # 16 records (both shards) * 2 epochs / 4 = 8 steps.
  assert (tmp_path / "out" / "ckpt-8.index").exists()
  result = run(
    train
    + [
      "--train_records=%s" % (tmp_path / "nothing-*"),
      "--output_dir=%s" % (tmp_path / "out2"),
    ]
  )
  assert result.returncode == 1
  assert result.stderr.splitlines()[-1] == (
    "ERROR: --train_records: no file matches %r" % str(tmp_path / "nothing-*")
  )


def test_run_squad_trains_on_beam_shards(tmp_path):
  source = tmp_path / "train.json"
  data = gzip.decompress(
    (FIXTURES / "squad" / "small_v1_first_answer.json.gz").read_bytes()
  )
  source.write_bytes(data)
  encoder = FIXTURES / "encoder"
  vocab = "--vocab_file=%s" % (encoder / "vocab_small.txt")
  _ok(
    _run(
      "data_prep.squad",
      "--input_file=%s" % source,
      vocab,
      "--is_training",
      "--max_seq_length=64",
      "--doc_stride=32",
      "--max_query_length=16",
      "--output_file=%s" % (tmp_path / "train.tf_record"),
      "--runner=DirectRunner",
      "--num_output_shards=2",
    )
  )
  files = _shards(tmp_path / "train.tf_record")
  assert len(files) == 2
  result = run(
    [
      "run_squad.py",
      vocab,
      "--do_train",
      "--bert_config_file=%s" % (encoder / "ckpt_b" / "bert_config.json"),
      "--train_records=%s" % (tmp_path / "train.tf_record-*"),
      "--output_dir=%s" % (tmp_path / "out"),
      "--max_seq_length=64",
      "--doc_stride=32",
      "--max_query_length=16",
      "--train_batch_size=32",
      "--num_train_epochs=1",
      "--save_checkpoints_steps=0",
    ]
  )
  _ok(result)
  import tensorflow as tf  # pylint: disable=g-import-not-at-top

  count = sum(1 for _ in tf.data.TFRecordDataset([str(f) for f in files]))
  steps = int(count / 32)
  assert (tmp_path / "out" / ("ckpt-%d.index" % steps)).exists()
  assert not (tmp_path / "out" / "train.tf_record").exists()


def _train(script, *args):
  encoder = FIXTURES / "encoder"
  return run(
    [
      script,
      "--do_train",
      "--vocab_file=%s" % (encoder / "vocab_small.txt"),
      "--bert_config_file=%s" % (encoder / "ckpt_b" / "bert_config.json"),
      "--train_batch_size=4",
      "--num_train_epochs=1",
      "--save_checkpoints_steps=0",
      *args,
    ]
  )


def _record_count(files):
  import tensorflow as tf  # pylint: disable=g-import-not-at-top

  return sum(1 for _ in tf.data.TFRecordDataset([str(f) for f in files]))


def test_run_ner_and_run_multiple_choice_train_on_beam_shards(tmp_path):
  vocab = "--vocab_file=%s" % (FIXTURES / "encoder" / "vocab_small.txt")
  conll = tmp_path / "train.txt"
  # 100 documents: two chunks of whole documents, so two shards.
  conll.write_text((FIXTURES / "ner" / "train.txt").read_text() * 100)
  result = _run(
    "data_prep.ner",
    "--input_file=%s" % conll,
    vocab,
    "--max_seq_length=24",
    "--output_file=%s" % (tmp_path / "ner.tf_record"),
    "--runner=DirectRunner",
    "--num_output_shards=2",
  )
  _ok(result)
  labels = result.stdout.splitlines()[-1].split("labels: ")[1]
  shards = "--train_records=%s" % (tmp_path / "ner.tf_record-*")
  _ok(
    _train(
      "run_ner.py",
      shards,
      "--labels=" + labels,
      "--max_seq_length=24",
      "--train_batch_size=32",
      "--output_dir=%s" % (tmp_path / "ner"),
    )
  )
  assert len(_shards(tmp_path / "ner.tf_record")) == 2
  steps = _record_count(_shards(tmp_path / "ner.tf_record")) // 32
  assert (tmp_path / "ner" / ("ckpt-%d.index" % steps)).exists()
  assert not (tmp_path / "ner" / "train.tf_record").exists()
  # Records that do not fit the run: tests/hostile/test_silent_wrong.py.

  # Multiple choice: no --data_dir, the choice count read from the records.
  swag = tmp_path / "swag.csv"
  lines = (FIXTURES / "swag" / "train.csv").read_text().splitlines(True)
  swag.write_text(lines[0] + "".join(lines[1:]) * 3)
  _ok(
    _run(
      "data_prep.multiple_choice",
      "--input_file=%s" % swag,
      vocab,
      "--max_seq_length=32",
      "--output_file=%s" % (tmp_path / "mc.tf_record"),
      "--runner=DirectRunner",
      "--num_output_shards=2",
    )
  )
  _ok(
    _train(
      "run_multiple_choice.py",
      "--max_seq_length=32",
      "--train_records=%s" % (tmp_path / "mc.tf_record-*"),
      "--output_dir=%s" % (tmp_path / "mc"),
    )
  )
  steps = _record_count(_shards(tmp_path / "mc.tf_record")) // 4
  assert (tmp_path / "mc" / ("ckpt-%d.index" % steps)).exists()
