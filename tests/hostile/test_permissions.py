"""Class 8 (permissions): every output kind -- a run folder, data_prep
records, features, conversions in both formats, a SavedModel, predictions
(fetched models: tests/checkpoints/test_fetch_models.py) -- has the modes
the umask gives (exported folders were 0700 and converted model.safetensors
0600: a serving process of another user could not read them). Run under
umask 027, so a default 0600/0700 and a world-readable 0644/0755 are both
caught."""

import os

import pytest

from tests.helpers.checkpoints import CKPT
from tests.helpers.checkpoints import ENCODER_DIR
from tests.helpers.checkpoints import VOCAB
from tests.helpers.cli import run_cases
from tests.helpers.scripts import classifier_args
from tests.helpers.scripts import GLUE

pytestmark = pytest.mark.process  # starts programs

_UMASK = 0o027


def _modes(root):
  """{path relative to root: mode} of everything under `root`."""
  modes = {".": os.stat(root).st_mode & 0o777}
  for folder, dirs, files in os.walk(root):
    for name in dirs + files:
      path = os.path.join(folder, name)
      modes[os.path.relpath(path, root)] = os.stat(path).st_mode & 0o777
  return modes


def test_every_output_follows_the_umask(tmp_path):
  out = tmp_path / "out"
  records = tmp_path / "in.jsonl"
  records.write_text('{"text_a": "hello", "text_b": "world"}\n')
  export_dir = out / "saved_model"
  cases = [
    (
      "bert_tf.convert_checkpoint",
      ["--input=" + CKPT, "--output_dir=%s" % (out / "tf1")],
    ),
    (
      "bert_tf.convert_checkpoint",
      [
        "--input=" + CKPT,
        "--output_format=hf",
        "--output_dir=%s" % (out / "hf"),
      ],
    ),
    (
      "bert_tf.export_saved_model",
      [
        "--task=encoder",
        "--checkpoint=" + CKPT,
        "--vocab_file=" + VOCAB,
        "--max_seq_length=16",
        "--export_dir=%s" % export_dir,
      ],
    ),
    (
      "bert_tf.predict",
      [
        "--export_dir=%s" % export_dir,
        "--input_file=%s" % records,
        "--output_file=%s" % (out / "predict" / "p.jsonl"),
      ],
    ),
    (
      "data_prep.classifier",
      [
        "--task_name=mrpc",
        "--data_dir=%s" % (GLUE / "MRPC"),
        "--split=train",
        "--vocab_file=" + VOCAB,
        "--output_file=%s" % (out / "records" / "train.tf_record"),
      ],
    ),
    (
      "extract_features",
      [
        "--input_file=%s" % (ENCODER_DIR / "extract_input.txt"),
        "--output_file=%s" % (out / "features" / "f.jsonl"),
        "--vocab_file=" + VOCAB,
        "--init_checkpoint=" + CKPT,
        "--bert_config_file=%s" % (ENCODER_DIR / "ckpt_b" / "bert_config.json"),
        "--max_seq_length=16",
        "--layers=-1",
      ],
    ),
    (
      "run_classifier",
      classifier_args(out / "run")
      + ["--do_eval", "--init_checkpoint=" + CKPT, "--max_seq_length=16"],
    ),
  ]
  old = os.umask(_UMASK)
  try:
    outcomes = run_cases(cases)
  finally:
    os.umask(old)
  for (entry, _), (code, stderr) in zip(cases, outcomes):
    assert code == 0, (entry, stderr[-2000:])
  modes = _modes(out)
  assert {
    "tf1/bert_model.ckpt.index",
    "hf/model.safetensors",
    "saved_model/variables",
    "saved_model/saved_model.pb",
    "predict/p.jsonl",
    "records/train.tf_record",
    "features/f.jsonl",
    "run/eval_results.txt",
  } <= set(modes)
  wrong = {
    path: oct(mode)
    for path, mode in modes.items()
    if mode != (0o777 if os.path.isdir(out / path) else 0o666) & ~_UMASK
  }
  assert not wrong, wrong
