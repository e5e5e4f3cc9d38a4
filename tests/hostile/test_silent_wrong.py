"""Class 3 (silently wrong results with exit 0): non-finite losses and labels,
nonsense configs, an output over its input, empty and non-UTF-8 inputs now
stop with one line (records: test_silent_wrong_records.py)."""

import gzip
import hashlib
import os
import shutil

import pytest

from tests.conftest import FIXTURES
from tests.conftest import REPO
from tests.helpers.checkpoints import CKPT
from tests.helpers.checkpoints import VOCAB
from tests.helpers.checkpoints import write_config
from tests.helpers.cli import assert_one_error
from tests.helpers.cli import run_cases
from tests.helpers.scripts import classifier_args
from tests.helpers.scripts import GLUE

pytestmark = pytest.mark.process  # starts programs

EXTRACT_INPUT = FIXTURES / "encoder" / "extract_input.txt"
SAMPLE_TEXT = REPO / "examples" / "data" / "sample_text.txt"


def _digest(path):
  return hashlib.sha256(open(path, "rb").read()).hexdigest()


def _stsb_with_label(tmp_path, label):
  """The STS-B fixture with `label` on train.tsv line 3."""
  folder = tmp_path / ("stsb_" + hashlib.md5(label.encode()).hexdigest()[:6])
  shutil.copytree(GLUE / "STS-B", folder)
  lines = (folder / "train.tsv").read_text().splitlines(keepends=True)
  fields = lines[2].rstrip("\n").split("\t")
  lines[2] = "\t".join(fields[:-1] + [label]) + "\n"
  (folder / "train.tsv").write_text("".join(lines))
  return folder


def test_training_inputs_that_poison_the_model(tmp_path):
  out = tmp_path / "out"
  nan = _stsb_with_label(tmp_path, "nan")
  big = _stsb_with_label(tmp_path, "1e39")
  cases = {
    # Adam at this rate overflows the weights within the run.
    "loss_goes_non_finite": (
      classifier_args(out)
      + ["--do_train", "--learning_rate=1e30", "--num_train_epochs=3"],
      ["training loss is", "--learning_rate"],
    ),
    "nan_stsb_label": (
      classifier_args(out, data_dir=nan, task="STS-B") + ["--do_train"],
      ["%s:3:" % (nan / "train.tsv"), "'nan'"],
    ),
    "float32_overflowing_label": (
      classifier_args(out, data_dir=big, task="STS-B") + ["--do_train"],
      ["%s:3:" % (big / "train.tsv"), "'1e39'"],
    ),
    "zero_layer_model": (
      classifier_args(
        out, config=write_config(tmp_path / "l.json", num_hidden_layers=-1)
      )
      + ["--do_train"],
      [str(tmp_path / "l.json"), "'num_hidden_layers'"],
    ),
    "heads_do_not_divide_hidden": (
      classifier_args(
        out, config=write_config(tmp_path / "h.json", num_attention_heads=3)
      )
      + ["--do_train"],
      [str(tmp_path / "h.json"), "'hidden_size'"],
    ),
  }
  outcomes = run_cases(
    [("run_classifier", a) for a, _ in cases.values()]
    + [
      (
        "run_multiple_choice",
        [
          "--data_dir=%s" % (FIXTURES / "swag"),
          "--do_train",
          "--vocab_file=" + VOCAB,
          "--output_dir=%s" % out,
          "--bert_config_file=%s"
          % write_config(tmp_path / "z.json", num_hidden_layers=0),
        ],
      )
    ]
  )
  cases["zero_layer_multiple_choice"] = (
    None,
    ["z.json", "'num_hidden_layers'"],
  )
  for (name, (_, culprits)), outcome in zip(cases.items(), outcomes):
    assert_one_error(outcome, *culprits, name=name)
  # The poisoned run saved nothing.
  assert not [p for p in os.listdir(out) if p.startswith("ckpt")]


def test_no_output_is_written_over_an_input(tmp_path):
  files = {}
  for name, source in (
    ("text", EXTRACT_INPUT),
    ("corpus", SAMPLE_TEXT),
    ("tsv", GLUE / "MRPC" / "train.tsv"),
  ):
    files[name] = tmp_path / name
    shutil.copy(source, files[name])
  squad = tmp_path / "squad.json"
  squad.write_bytes(
    gzip.decompress((FIXTURES / "squad" / "small_v1.json.gz").read_bytes())
  )
  files["squad"] = squad
  link = tmp_path / "link_to_text"
  link.symlink_to(files["text"])
  vocab_copy = tmp_path / "vocab.txt"
  shutil.copy(VOCAB, vocab_copy)
  before = {name: _digest(path) for name, path in files.items()}
  extract = [
    "--vocab_file=" + VOCAB,
    "--init_checkpoint=" + CKPT,
    "--bert_config_file=%s" % write_config(tmp_path / "c.json"),
  ]
  cases = [
    (
      "extract_features",
      ["--input_file=%s" % files["text"], "--output_file=%s" % files["text"]]
      + extract,
      "--input_file",
    ),
    (
      "extract_features",
      ["--input_file=%s" % files["text"], "--output_file=%s" % link] + extract,
      "--input_file",
    ),
    (
      "extract_features",
      [
        "--input_file=%s" % files["text"],
        "--output_file=%s" % vocab_copy,
        "--vocab_file=%s" % vocab_copy,
      ]
      + extract[1:],
      "--vocab_file",
    ),
    (
      "data_prep.create_pretraining_data",
      [
        "--input_file=%s,%s" % (files["text"], files["corpus"]),
        "--output_file=%s" % files["corpus"],
        "--vocab_file=" + VOCAB,
      ],
      "--input_file",
    ),
    (
      "data_prep.squad",
      [
        "--input_file=%s" % squad,
        "--vocab_file=" + VOCAB,
        "--output_file=%s" % squad,
      ],
      "--input_file",
    ),
    (
      "data_prep.classifier",
      [
        "--task_name=mrpc",
        "--data_dir=%s" % (GLUE / "MRPC"),
        "--split=train",
        "--input_file=%s" % files["tsv"],
        "--vocab_file=" + VOCAB,
        "--output_file=%s" % files["tsv"],
      ],
      "--input_file",
    ),
    (
      "bert_tf.predict",
      [
        "--export_dir=%s" % tmp_path,
        "--input_file=%s" % files["text"],
        "--output_file=%s" % files["text"],
      ],
      "--input_file",
    ),
  ]
  outcomes = run_cases([(e, a) for e, a, _ in cases])
  for (entry, argv, input_flag), outcome in zip(cases, outcomes):
    assert_one_error(
      outcome,
      "--output_file=",
      "is the same file as %s" % input_flag,
      name=" ".join([entry] + argv),
    )
  assert before == {name: _digest(path) for name, path in files.items()}


def test_empty_and_non_utf8_inputs(tmp_path):
  empty = tmp_path / "empty.txt"
  empty.write_text("")
  utf16 = tmp_path / "utf16.txt"
  utf16.write_bytes(SAMPLE_TEXT.read_text(encoding="utf-8").encode("utf-16-le"))
  latin1 = tmp_path / "latin1.txt"
  latin1.write_bytes("first line\nCaf\xe9 au lait\n".encode("latin-1"))
  tsv16 = tmp_path / "MRPC16"
  tsv16.mkdir()
  (tsv16 / "train.tsv").write_bytes(
    (GLUE / "MRPC" / "train.tsv")
    .read_text(encoding="utf-8-sig")
    .encode("utf-16-le")
  )
  conll16 = tmp_path / "conll16"
  conll16.mkdir()
  (conll16 / "train.txt").write_bytes(
    (FIXTURES / "ner" / "train.txt")
    .read_text(encoding="utf-8")
    .encode("utf-16-le")
  )
  vocab16 = tmp_path / "vocab16.txt"
  vocab16.write_bytes(open(VOCAB, "rb").read().decode("utf-8").encode("utf-16"))
  corpus = ["--vocab_file=" + VOCAB, "--output_file=%s" % (tmp_path / "o")]
  cases = {
    "empty_extract_input": (
      "extract_features",
      [
        "--input_file=%s" % empty,
        "--output_file=%s" % (tmp_path / "f"),
        "--vocab_file=" + VOCAB,
        "--init_checkpoint=" + CKPT,
        "--bert_config_file=%s" % write_config(tmp_path / "c.json"),
      ],
      ["--input_file=%s" % empty, "no lines"],
    ),
    "utf16_corpus": (
      "data_prep.create_pretraining_data",
      ["--input_file=%s" % utf16] + corpus,
      ["%s:1:" % utf16, "NUL"],
    ),
    "latin1_corpus": (
      "data_prep.create_pretraining_data",
      ["--input_file=%s" % latin1] + corpus,
      ["%s:2:" % latin1, "not UTF-8"],
    ),
    "utf16_tsv": (
      "data_prep.classifier",
      [
        "--task_name=mrpc",
        "--data_dir=%s" % tsv16,
        "--split=train",
        "--vocab_file=" + VOCAB,
        "--output_file=%s" % (tmp_path / "t"),
      ],
      [str(tsv16 / "train.tsv"), "NUL"],
    ),
    "utf16_conll": (
      "run_ner",
      [
        "--data_dir=%s" % conll16,
        "--do_train",
        "--vocab_file=" + VOCAB,
        "--bert_config_file=%s" % write_config(tmp_path / "c.json"),
        "--output_dir=%s" % (tmp_path / "ner"),
      ],
      ["%s:1:" % (conll16 / "train.txt"), "NUL"],
    ),
    "utf16_vocab": (
      "data_prep.create_pretraining_data",
      [
        "--input_file=%s" % SAMPLE_TEXT,
        "--vocab_file=%s" % vocab16,
        "--output_file=%s" % (tmp_path / "o"),
      ],
      ["%s:1:" % vocab16, "not UTF-8"],
    ),
  }
  outcomes = run_cases([(e, a) for e, a, _ in cases.values()])
  for (name, (_, _, culprits)), outcome in zip(cases.items(), outcomes):
    assert_one_error(outcome, *culprits, name=name)
  assert sorted(os.listdir(tmp_path)) == sorted(
    [
      "empty.txt",
      "utf16.txt",
      "latin1.txt",
      "MRPC16",
      "conll16",
      "vocab16.txt",
      "c.json",
    ]
  )
