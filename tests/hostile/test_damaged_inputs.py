"""Class 3 (damaged state files and inputs end in tracebacks), over every
entry point: a corrupt SentencePiece model for every command that takes one,
run state files (eval_history.jsonl, best/best.json, early_stopping.json) that
are garbled, not UTF-8 or nested too deeply, a truncated checkpoint or
SavedModel, garbled export metadata, deeply nested JSON input. Each ends in
one `ERROR:` line naming the file; nothing escapes."""

import shutil

import pytest

from tests.helpers.checkpoints import CKPT
from tests.helpers.checkpoints import ENCODER_DIR
from tests.helpers.checkpoints import VOCAB
from tests.helpers.cli import assert_one_error
from tests.helpers.cli import run_cases
from tests.helpers.scripts import classifier_args
from tests.helpers.scripts import tokenizer_args

pytestmark = pytest.mark.process  # starts programs

_CONFIG = str(ENCODER_DIR / "ckpt_b" / "bert_config.json")
_DEEP = "[" * 100000 + "]" * 100000


def test_a_corrupt_sentencepiece_model_in_every_command(
  tmp_path, defined_flags
):
  model = tmp_path / "broken.model"
  model.write_bytes(b"\x0a\x05<html")
  table = tokenizer_args(tmp_path)
  takers = sorted(e for e, f in defined_flags.items() if "spm_model_file" in f)
  assert sorted(table) == takers  # a new command needs a row here
  outcomes = run_cases(
    [(e, table[e] + ["--spm_model_file=%s" % model]) for e in takers]
  )
  for entry, outcome in zip(takers, outcomes):
    assert_one_error(
      outcome,
      "--spm_model_file=%s" % model,
      "not a SentencePiece model",
      name=entry,
    )


def _damaged_export(tiny_export, tmp_path):
  """Copies of the export: variables cut in half, metadata garbled."""
  cut = tmp_path / "cut"
  shutil.copytree(tiny_export, cut)
  data = cut / "variables" / "variables.data-00000-of-00001"
  data.write_bytes(data.read_bytes()[: data.stat().st_size // 2])
  garbled = tmp_path / "garbled"
  shutil.copytree(tiny_export, garbled)
  (garbled / "assets.extra" / "export_config.json").write_text('{"task": ')
  return cut, garbled


def _damaged_checkpoint(tmp_path):
  folder = tmp_path / "ckpt"
  shutil.copytree(ENCODER_DIR / "ckpt_b", folder)
  index = folder / "bert_model.ckpt.index"
  index.write_bytes(index.read_bytes()[:40])
  return str(folder / "bert_model.ckpt")


def _run_with(tmp_path, name, content):
  """A run folder holding one damaged state file."""
  run = tmp_path / ("run_" + name.replace("/", "_"))
  (run / "best").mkdir(parents=True)
  path = run / name
  path.write_bytes(content)
  return run, path


def test_damaged_state_files_and_models_are_one_line(tmp_path, tiny_export):
  cut, garbled = _damaged_export(tiny_export, tmp_path)
  records = tmp_path / "in.jsonl"
  records.write_text('{"text_a": "hello"}\n')
  deep = tmp_path / "deep.jsonl"
  deep.write_text(_DEEP + "\n")
  prefix = _damaged_checkpoint(tmp_path)
  history_bytes = b'{"global_step": 1, "eval_accuracy": 0.5}\n\xff\xfe\n'
  evaluate = [
    "--do_train",
    "--do_eval",
    "--eval_every_steps=1",
    "--best_metric=eval_accuracy",
  ]
  runs = {
    name: _run_with(tmp_path, name, content)
    for name, content in [
      ("eval_history.jsonl", history_bytes),
      ("best/best.json", b'{"metric": "eval_accuracy", "value": '),
      ("early_stopping.json", b"[1, 2]"),
    ]
  }
  deep_config = tmp_path / "deep_config.json"
  deep_config.write_text(_DEEP)
  predict = [
    "--input_file=%s" % records,
    "--output_file=%s" % (tmp_path / "p.jsonl"),
  ]
  # name -> (entry point, argv, what the line must name)
  cases = {
    "predict_cut_variables": (
      "bert_tf.predict",
      ["--export_dir=%s" % cut] + predict,
      ["--export_dir=%s" % cut, "cannot load"],
    ),
    "predict_garbled_export_config": (
      "bert_tf.predict",
      ["--export_dir=%s" % garbled] + predict,
      [str(garbled / "assets.extra" / "export_config.json")],
    ),
    "predict_deeply_nested_input": (
      "bert_tf.predict",
      [
        "--export_dir=%s" % tiny_export,
        "--input_file=%s" % deep,
        "--output_file=%s" % (tmp_path / "d.jsonl"),
      ],
      ["%s line 1" % deep, "nested too deeply"],
    ),
    "export_cut_checkpoint_index": (
      "bert_tf.export_saved_model",
      [
        "--task=encoder",
        "--checkpoint=" + prefix,
        "--vocab_file=" + VOCAB,
        "--bert_config_file=" + _CONFIG,
        "--export_dir=%s" % (tmp_path / "e"),
      ],
      [prefix, "unreadable checkpoint"],
    ),
    "config_nested_too_deeply": (
      "extract_features",
      [
        "--input_file=%s" % (ENCODER_DIR / "extract_input.txt"),
        "--output_file=%s" % (tmp_path / "f.jsonl"),
        "--vocab_file=" + VOCAB,
        "--init_checkpoint=" + CKPT,
        "--bert_config_file=%s" % deep_config,
      ],
      [str(deep_config)],
    ),
    "plot_run_history_not_utf8": (
      "bert_tf.plot_run",
      [
        "--output_dir=%s" % runs["eval_history.jsonl"][0],
        "--output_file=%s" % (tmp_path / "plot.png"),
      ],
      ["%s:2" % runs["eval_history.jsonl"][1], "not UTF-8"],
    ),
  }
  for name, (run, path) in runs.items():
    cases["resume_with_damaged_" + name] = (
      "run_classifier",
      classifier_args(run) + evaluate,
      [str(path)],
    )
  outcomes = run_cases([(e, a) for e, a, _ in cases.values()])
  for (name, (_, _, culprits)), outcome in zip(cases.items(), outcomes):
    assert_one_error(outcome, *culprits, name=name)
  assert not (tmp_path / "e").exists()
  assert not (tmp_path / "p.jsonl").exists()
