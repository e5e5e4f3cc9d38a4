"""Class 2 (errors that escaped as tracebacks): OS errors of any kind, damaged
checkpoints, safetensors and TFRecords, and malformed configs end in one
`ERROR:` line naming the user's path, flag or key; output locations are
checked before any work."""

import gzip
import json
import shutil

import pytest

from bert_tf.io_utils import error_line
from tests.conftest import FIXTURES
from tests.conftest import REPO
from tests.helpers.checkpoints import CKPT
from tests.helpers.checkpoints import TINY_CONFIG
from tests.helpers.checkpoints import VOCAB
from tests.helpers.checkpoints import write_config
from tests.helpers.cli import assert_one_error
from tests.helpers.cli import run_cases
from tests.helpers.filesystems import tmpfs
from tests.helpers.scripts import classifier_args
from tests.helpers.scripts import GLUE


def _damaged_checkpoints(tmp_path):
  """Copies of the tiny checkpoint: .data truncated, and bytes flipped all
  over it (so that variables the classifier loads are hit)."""
  prefixes = {}
  for kind in ("truncated", "flipped"):
    folder = tmp_path / kind
    shutil.copytree(FIXTURES / "encoder" / "ckpt_b", folder)
    data = folder / "bert_model.ckpt.data-00000-of-00001"
    raw = bytearray(data.read_bytes())
    if kind == "truncated":
      raw = raw[: len(raw) // 2]
    else:
      for position in range(0, len(raw), len(raw) // 16):
        raw[position] ^= 0xFF
    data.write_bytes(bytes(raw))
    prefixes[kind] = str(folder / "bert_model.ckpt")
  return prefixes


def _damaged_safetensors(tmp_path):
  folder = tmp_path / "hf"
  folder.mkdir()
  (folder / "config.json").write_text(
    json.dumps(
      {
        "model_type": "bert",
        "vocab_size": 30,
        "hidden_size": 8,
        "num_hidden_layers": 1,
        "num_attention_heads": 2,
        "intermediate_size": 16,
        "max_position_embeddings": 16,
        "type_vocab_size": 2,
      }
    )
  )
  # A header length of 2**40 bytes in a 20-byte file.
  (folder / "model.safetensors").write_bytes(
    (2**40).to_bytes(8, "little") + b'{"x": 1}    '
  )
  return folder


def _damaged_pretraining_records(tmp_path):
  """The fixture records with one byte flipped near the end (after the
  first record, which run_pretraining checks up front)."""
  raw = bytearray(
    gzip.decompress(
      (FIXTURES / "pretraining" / "instances.tfrecord.gz").read_bytes()
    )
  )
  raw[-200] ^= 0xFF
  path = tmp_path / "damaged.tfrecord"
  path.write_bytes(bytes(raw))
  return path


@pytest.mark.process
def test_damaged_files_and_bad_locations_are_one_line(tmp_path):
  a_file = tmp_path / "a_file"
  a_file.write_text("x")
  checkpoints = _damaged_checkpoints(tmp_path)
  hf = _damaged_safetensors(tmp_path)
  records = _damaged_pretraining_records(tmp_path)
  bad_json = tmp_path / "bad.json"
  bad_json.write_text('{"vocab_size": 3000,')
  out = tmp_path / "out"
  train = classifier_args(out) + ["--do_train"]
  pretrain = [
    "--input_file=%s" % records,
    "--output_dir=%s" % (tmp_path / "pretraining"),
    "--bert_config_file=%s"
    % write_config(tmp_path / "pt.json", vocab_size=30522),
    "--do_train",
    "--train_batch_size=4",
    "--num_train_steps=40",
    "--num_warmup_steps=0",
    "--max_seq_length=128",
    "--max_predictions_per_seq=20",
    "--noprogress",
  ]
  # name -> (entry point, argv, what the line must name)
  cases = {
    "output_dir_is_a_file": (
      "run_classifier",
      classifier_args(a_file) + ["--do_eval"],
      [str(a_file), "not a directory"],
    ),
    "output_file_under_proc": (
      "extract_features",
      [
        "--input_file=%s" % (FIXTURES / "encoder" / "extract_input.txt"),
        "--output_file=/proc/hostile/out.jsonl",
        "--vocab_file=" + VOCAB,
        "--bert_config_file=%s" % write_config(tmp_path / "c.json"),
        "--init_checkpoint=" + CKPT,
      ],
      ["--output_file=/proc/hostile/out.jsonl", "/proc"],
    ),
    "output_file_is_a_directory": (
      "data_prep.classifier",
      [
        "--task_name=mrpc",
        "--data_dir=%s" % (GLUE / "MRPC"),
        "--split=train",
        "--vocab_file=" + VOCAB,
        "--output_file=%s" % tmp_path,
      ],
      ["--output_file=%s" % tmp_path, "is a directory"],
    ),
    "truncated_checkpoint_data": (
      "run_classifier",
      train + ["--init_checkpoint=" + checkpoints["truncated"]],
      [checkpoints["truncated"], "unreadable checkpoint"],
    ),
    "checksum_failing_checkpoint_data": (
      "run_classifier",
      train + ["--init_checkpoint=" + checkpoints["flipped"]],
      [checkpoints["flipped"], "unreadable checkpoint"],
    ),
    "corrupt_safetensors_header": (
      "bert_tf.convert_checkpoint",
      [
        "--input=%s" % hf,
        "--input_format=hf",
        "--output_dir=%s" % (tmp_path / "conv"),
      ],
      [str(hf / "model.safetensors")],
    ),
    "corrupt_tfrecord_met_in_training": (
      "run_pretraining",
      pretrain,
      [str(records), "damaged TFRecord"],
    ),
    "corrupt_tfrecord_met_in_eval": (
      "run_pretraining",
      [a for a in pretrain if a != "--do_train"]
      + ["--do_eval", "--output_dir=%s" % (tmp_path / "ev")],
      [str(records), "damaged TFRecord"],
    ),
    "config_hidden_size_string": (
      "run_classifier",
      classifier_args(
        out, config=write_config(tmp_path / "s.json", hidden_size="768")
      )
      + ["--do_train"],
      ["s.json", "'hidden_size'"],
    ),
    "config_dropout_1_5": (
      "run_classifier",
      classifier_args(
        out, config=write_config(tmp_path / "d.json", hidden_dropout_prob=1.5)
      )
      + ["--do_train"],
      ["d.json", "'hidden_dropout_prob'"],
    ),
    "config_negative_hidden_size": (
      "extract_features",
      [
        "--input_file=%s" % (FIXTURES / "encoder" / "extract_input.txt"),
        "--output_file=%s" % (tmp_path / "f.jsonl"),
        "--vocab_file=" + VOCAB,
        "--init_checkpoint=" + CKPT,
        "--bert_config_file=%s"
        % write_config(tmp_path / "n.json", hidden_size=-32),
      ],
      ["n.json", "'hidden_size'"],
    ),
    "config_not_json": (
      "run_classifier",
      classifier_args(out, config=str(bad_json)) + ["--do_train"],
      [str(bad_json)],
    ),
  }
  outcomes = run_cases([(e, a) for e, a, _ in cases.values()])
  for (name, (_, _, culprits)), outcome in zip(cases.items(), outcomes):
    assert_one_error(outcome, *culprits, name=name)
  assert not (tmp_path / "f.jsonl").exists()


@pytest.mark.process
def test_read_only_and_full_disks_are_one_line_naming_the_users_path(tmp_path):
  with (
    tmpfs(tmp_path / "ro", "ro,size=64k") as ro,
    tmpfs(tmp_path / "full", "size=4k") as full,
  ):
    examples = REPO / "examples" / "data"
    outcomes = run_cases(
      [
        ("run_classifier", classifier_args(ro / "out") + ["--do_train"]),
        (
          "data_prep.create_pretraining_data",
          [
            "--input_file=%s" % (examples / "sample_text.txt"),
            "--vocab_file=%s" % (examples / "vocab.txt"),
            "--dupe_factor=1",
            "--output_file=%s" % (full / "pt.tfrecord"),
          ],
        ),
      ]
    )
    assert_one_error(
      outcomes[0],
      "--output_dir=%s" % (ro / "out"),
      "Read-only file system",
      name="read-only",
    )
    assert_one_error(
      outcomes[1],
      str(full / "pt.tfrecord"),
      "No space left on device",
      name="disk full",
    )
    assert list(full.iterdir()) == []  # no temp file left behind


@pytest.mark.parametrize(
  "error,line",
  [
    (
      OSError(28, "No space left on device", "/o/p.json.tmp-0123abcd"),
      "/o/p.json: No space left on device",
    ),
    (IsADirectoryError(21, "Is a directory", "/o"), "/o: Is a directory"),
    (KeyError("x"), None),  # a bug keeps its traceback
  ],
)
def test_error_line(error, line):
  assert error_line(error) == line


def test_tensorflow_errors_are_their_first_line():
  import tensorflow as tf  # pylint: disable=g-import-not-at-top

  error = tf.errors.DataLossError(
    None,
    None,
    "{{function_node __wrapped__X}} TensorBundle at /m/ckpt "
    "shard 0: Checksum does not match [Op:RestoreV2]\nmore",
  )
  assert error_line(error) == (
    "DataLossError: TensorBundle at /m/ckpt shard 0: Checksum does not match"
  )
  assert TINY_CONFIG["vocab_size"] == 3000


@pytest.mark.process
def test_the_other_families_too(tmp_path):
  a_file = tmp_path / "a_file"
  a_file.write_text("x")
  model = [
    "--vocab_file=" + VOCAB,
    "--bert_config_file=%s" % write_config(tmp_path / "c.json"),
  ]
  dropout = write_config(tmp_path / "d.json", attention_probs_dropout_prob=1)
  squad = tmp_path / "squad.json"
  squad.write_bytes(
    gzip.decompress((FIXTURES / "squad" / "small_v1.json.gz").read_bytes())
  )
  raw = tmp_path / "raw_results.jsonl"
  raw.write_text('{"unique_id": 1000000000, "start_logits": [0.0\n')
  # name -> (entry point, argv, what the line must name)
  cases = {
    "squad_output_dir_is_a_file": (
      "run_squad",
      model
      + [
        "--do_predict",
        "--predict_file=%s" % squad,
        "--output_dir=%s" % a_file,
      ],
      ["--output_dir=%s" % a_file, "not a directory"],
    ),
    "ner_dropout_1": (
      "run_ner",
      [
        "--data_dir=%s" % (FIXTURES / "ner"),
        "--do_train",
        "--vocab_file=" + VOCAB,
        "--bert_config_file=" + dropout,
        "--output_dir=%s" % (tmp_path / "ner"),
      ],
      ["d.json", "'attention_probs_dropout_prob'"],
    ),
    "multiple_choice_dropout_1": (
      "run_multiple_choice",
      [
        "--data_dir=%s" % (FIXTURES / "swag"),
        "--do_train",
        "--vocab_file=" + VOCAB,
        "--bert_config_file=" + dropout,
        "--output_dir=%s" % (tmp_path / "mc"),
      ],
      ["d.json", "'attention_probs_dropout_prob'"],
    ),
    "squad_predictions_truncated_raw_results": (
      "data_prep.squad_predictions",
      [
        "--predict_file=%s" % squad,
        "--raw_results_file=%s" % raw,
        "--vocab_file=" + VOCAB,
        "--output_dir=%s" % (tmp_path / "p"),
      ],
      ["%s line 1" % raw],
    ),
    "export_checkpoint_output_dir_under_proc": (
      "bert_tf.export_checkpoint",
      ["--model_dir=%s" % tmp_path, "--output_dir=/proc/hostile"] + model[1:],
      ["--output_dir=/proc/hostile", "/proc"],
    ),
    "export_saved_model_under_a_file": (
      "bert_tf.export_saved_model",
      [
        "--task=encoder",
        "--checkpoint=" + CKPT,
        "--export_dir=%s" % (a_file / "model"),
      ]
      + model,
      [str(a_file), "not a directory"],
    ),
    "predict_output_under_proc": (
      "bert_tf.predict",
      [
        "--export_dir=%s" % tmp_path,
        "--input_file=%s" % squad,
        "--output_file=/proc/hostile/out.jsonl",
      ],
      ["--output_file=/proc/hostile/out.jsonl"],
    ),
    "plot_output_file_under_a_file": (
      "bert_tf.plot_run",
      ["--output_dir=%s" % tmp_path, "--output_file=%s" % (a_file / "p.png")],
      [str(a_file), "not a directory"],
    ),
  }
  outcomes = run_cases([(e, a) for e, a, _ in cases.values()])
  for (name, (_, _, culprits)), outcome in zip(cases.items(), outcomes):
    assert_one_error(outcome, *culprits, name=name)
