"""Class 6 (flags silently ignored, suspicious inputs without a word), over
every entry point that defines the flag: a --task_name=tsv option with a GLUE
task and --spm_model_file beside --vocab_file are refused in one line; an
IOB1 file read as IOB2 and a prediction over 0 records are warned about."""

import json

import pytest

from tests.conftest import FIXTURES
from tests.helpers.checkpoints import VOCAB
from tests.helpers.checkpoints import write_config
from tests.helpers.cli import assert_one_error
from tests.helpers.cli import run_cases
from tests.helpers.scripts import classifier_args
from tests.helpers.scripts import GLUE
from tests.helpers.scripts import tokenizer_args

pytestmark = pytest.mark.process  # starts programs


def _takers(defined_flags, *names):
  return sorted(
    e for e, f in defined_flags.items() if all(n in f for n in names)
  )


def test_flags_another_option_makes_meaningless_are_refused(
  tmp_path, defined_flags
):
  glue = {
    "run_classifier": classifier_args(tmp_path / "c") + ["--do_train"],
    "data_prep.classifier": [
      "--task_name=mrpc",
      "--data_dir=%s" % (GLUE / "MRPC"),
      "--split=train",
      "--vocab_file=" + VOCAB,
      "--output_file=%s" % (tmp_path / "c.tfrecord"),
    ],
  }
  assert sorted(glue) == _takers(defined_flags, "multi_label", "task_name")
  cases = [
    (e, glue[e] + [flag], [flag.split("=")[0], "--task_name=tsv"])
    for e in sorted(glue)
    for flag in ("--multi_label", "--label_column=2", "--regression")
  ]
  model = tmp_path / "m.model"
  model.write_bytes(b"unused")
  both = tokenizer_args(tmp_path)
  assert sorted(both) == _takers(defined_flags, "spm_model_file", "vocab_file")
  cases += [
    (
      e,
      both[e] + ["--vocab_file=" + VOCAB, "--spm_model_file=%s" % model],
      ["--spm_model_file=%s and --vocab_file=%s" % (model, VOCAB), "give one"],
    )
    for e in sorted(both)
  ]
  outcomes = run_cases([(e, a) for e, a, _ in cases])
  for (entry, argv, culprits), outcome in zip(cases, outcomes):
    assert_one_error(outcome, *culprits, name="%s %s" % (entry, argv))
  assert not (tmp_path / "c.tfrecord").exists()


def test_suspicious_inputs_are_warned_about(tmp_path, tiny_export):
  iob1 = FIXTURES / "ner" / "iob1.txt"
  data_dir = tmp_path / "ner"
  data_dir.mkdir()
  (data_dir / "train.txt").write_bytes(iob1.read_bytes())
  empty = tmp_path / "empty.jsonl"
  empty.write_text("\n")
  out = tmp_path / "p.jsonl"
  small = write_config(tmp_path / "big_vocab.json", vocab_size=100)
  outcomes = run_cases(
    [
      (
        "data_prep.ner",
        [
          "--input_file=%s" % iob1,
          "--vocab_file=" + VOCAB,
          "--output_file=%s" % (tmp_path / "n.tfrecord"),
        ],
      ),
      # run_ner reads every file before it checks the vocab: the warning
      # comes, then the (wanted) error of a 100-token config.
      (
        "run_ner",
        [
          "--data_dir=%s" % data_dir,
          "--do_train",
          "--vocab_file=" + VOCAB,
          "--bert_config_file=" + small,
          "--output_dir=%s" % (tmp_path / "run"),
        ],
      ),
      (
        "bert_tf.predict",
        [
          "--export_dir=%s" % tiny_export,
          "--input_file=%s" % empty,
          "--output_file=%s" % out,
        ],
      ),
    ]
  )
  for entry, (code, stderr) in zip(("data_prep.ner", "run_ner"), outcomes):
    assert "an IOB1 file read as IOB2? --tag_scheme=iob1" in stderr, (
      entry,
      stderr[-2000:],
    )
    assert "Traceback" not in stderr
  assert outcomes[0][0] == 0
  code, stderr = outcomes[2]
  assert code == 0, stderr[-2000:]
  assert "%s holds no records: wrote an empty %s" % (empty, out) in stderr
  assert out.read_text() == ""


def test_a_records_own_field_is_never_replaced_by_an_output(
  tmp_path, tiny_export
):
  """A dev set's gold `label` beside a classifier's `label` output: here the
  encoder's `input_mask` output beside a record's own `input_mask` field."""
  text = {"text_a": "the cat", "text_b": ""}
  records = tmp_path / "in.jsonl"
  records.write_text(
    "".join(
      json.dumps(dict(text, **fields)) + "\n"
      for fields in (
        {"id": 1, "input_mask": "gold"},
        {"input_mask": 0, "predicted_input_mask": 1},
        {},  # no clash: the model's own mask, to compare with
      )
    )
  )
  out = tmp_path / "p.jsonl"
  ((code, stderr),) = run_cases(
    [
      (
        "bert_tf.predict",
        [
          "--export_dir=%s" % tiny_export,
          "--input_file=%s" % records,
          "--output_file=%s" % out,
        ],
      )
    ]
  )
  assert code == 0, stderr[-2000:]
  first, second, plain = [
    json.loads(line) for line in out.read_text().splitlines()
  ]
  mask = plain["input_mask"]
  assert len(mask) == 16 and mask[0] == 1  # [CLS] at least
  assert first["input_mask"] == "gold" and first["id"] == 1
  assert first["predicted_input_mask"] == mask
  assert (second["input_mask"], second["predicted_input_mask"]) == (0, 1)
  assert second["predicted_predicted_input_mask"] == mask
