"""Class 2 (an output may land on an input), over every entry point: each
output file flag a command defines is pointed at each input it defines -- an
input file, a file of a checkpoint it loads, a path inside a model folder it
reads -- and the command must refuse in one line before touching anything;
an output set replaces an earlier set's files (a conversion's vocab.txt, a
sharded TFRecord set)."""

import pytest

from bert_tf.records import tfrecord_file
from bert_tf.runtime import flag_checks
from tests.helpers.checkpoints import CKPT
from tests.helpers.checkpoints import ENCODER_DIR as ENCODER
from tests.helpers.checkpoints import VOCAB
from tests.helpers.cli import assert_one_error
from tests.helpers.cli import run_cases
from tests.helpers.scripts import GLUE

pytestmark = pytest.mark.process  # starts programs


def _inputs(tmp_path):
  """{input flag: (value, the path an output aims at, what the line names)}
  for every kind of input."""
  a_file = tmp_path / "input.txt"
  a_file.write_text("x\n")
  model_dir = tmp_path / "model"
  model_dir.mkdir()
  (model_dir / "saved_model.pb").write_bytes(b"model")
  prefix = tmp_path / "ckpt" / "bert_model.ckpt"
  prefix.parent.mkdir()
  (prefix.parent / "bert_model.ckpt.index").write_bytes(b"index")
  cases = {
    name: (str(a_file), str(a_file), "same file as --%s" % name)
    for name in flag_checks.INPUT_FILE_FLAGS
  }
  for name in flag_checks.INPUT_MODEL_FLAGS:
    cases[name] = (
      str(model_dir),
      str(model_dir / "saved_model.pb"),
      "inside --%s=%s" % (name, model_dir),
    )
    cases[name + "@prefix"] = (
      str(prefix),
      str(prefix) + ".index",
      "a file of --%s" % name,
    )
  return cases, [
    a_file,
    model_dir / "saved_model.pb",
    prefix.parent / "bert_model.ckpt.index",
  ]


def test_no_output_on_anything_a_command_reads(tmp_path, defined_flags):
  inputs, originals = _inputs(tmp_path)
  before = [p.read_bytes() for p in originals]
  cases = []
  for entry, flags in sorted(defined_flags.items()):
    for output in flag_checks.OUTPUT_FILE_FLAGS:
      if output not in flags:
        continue
      for key, (value, target, says) in inputs.items():
        name = key.split("@")[0]
        if name in flags and name != output:
          cases.append(
            (
              entry,
              ["--%s=%s" % (name, value), "--%s=%s" % (output, target)],
              ["--%s=%s" % (output, target), says],
            )
          )
  # A conversion into the folder of the model it converts.
  cases.append(
    (
      "bert_tf.convert_checkpoint",
      ["--input=%s" % CKPT, "--output_dir=%s" % (ENCODER / "ckpt_b")],
      ["--output_dir=%s" % (ENCODER / "ckpt_b"), "is the folder of --input"],
    )
  )
  assert len({c[0] for c in cases}) >= 8, cases  # most commands have one
  outcomes = run_cases([(e, a) for e, a, _ in cases])
  for (entry, argv, culprits), outcome in zip(cases, outcomes):
    assert_one_error(outcome, *culprits, name="%s %s" % (entry, argv))
  assert [p.read_bytes() for p in originals] == before


def test_output_sets_replace_earlier_sets(tmp_path):
  # A conversion clears an earlier conversion's files (its vocab.txt would
  # pass for the new model's); a single TFRecord file replaces an earlier
  # sharded set of the same output. The user's other files stay.
  out = tmp_path / "out"
  out.mkdir()
  earlier = ["vocab.txt", "model.safetensors", "config.json"]
  for name in earlier + ["notes.md"]:
    (out / name).write_text("earlier\n")
  for i in range(2):
    tfrecord_file.write_tfrecord_file(
      "%s-%05d-of-00002" % (out / "train.tf_record", i), [b"old"]
    )
  outcomes = run_cases(
    [
      (
        "bert_tf.convert_checkpoint",  # ckpt_b has no vocab.txt
        ["--input=%s" % CKPT, "--output_dir=%s" % out],
      ),
      (
        "data_prep.classifier",
        [
          "--task_name=mrpc",
          "--data_dir=%s" % (GLUE / "MRPC"),
          "--split=train",
          "--vocab_file=" + VOCAB,
          "--output_file=%s" % (out / "train.tf_record"),
        ],
      ),
    ]
  )
  for outcome in outcomes:
    assert outcome[0] == 0, outcome[1][-2000:]
  assert sorted(p.name for p in out.iterdir()) == [
    "bert_config.json",
    "bert_model.ckpt.data-00000-of-00001",
    "bert_model.ckpt.index",
    "checkpoint",
    "notes.md",
    "train.tf_record",
  ]
