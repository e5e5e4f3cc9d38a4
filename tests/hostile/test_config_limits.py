"""Class 9 (configs trusted before checking), over every entry point that
takes --bert_config_file and the configs inside artefacts (an HF
config.json, a run's run_config.json): sizes no 24 GB machine can build
(hidden_size 10**9, vocab_size 10**12, 10**6 layers) and mistyped values are
one `ERROR:` line naming the file and the key, before any tensor is
allocated (they used to end in an OOM traceback or build for minutes)."""

import json
import shutil

import pytest

from tests.conftest import FIXTURES
from tests.helpers.checkpoints import CKPT
from tests.helpers.checkpoints import VOCAB
from tests.helpers.checkpoints import write_config
from tests.helpers.cli import assert_one_error
from tests.helpers.cli import run_cases
from tests.helpers.scripts import classifier_args
from tests.helpers.scripts import tokenizer_args
from tests.hostile import artefacts

pytestmark = pytest.mark.process  # starts programs

# key -> (value, what the line says about it)
_HOSTILE = {
  "hidden_size": (10**9, "must be in [1, 16384], got 1000000000"),
  "vocab_size": (10**12, "must be in [1, 4194304], got 1000000000000"),
  "num_hidden_layers": (10**6, "must be in [1, 256], got 1000000"),
  "max_position_embeddings": ("abc", "must be an integer, got 'abc'"),
}


def _config_takers(tmp_path):
  """{entry point: argv that reaches its config}, without the config."""
  out = tmp_path / "out"
  runs = {
    e: [a for a in argv if not a.startswith(("--bert_config_file", "--vocab"))]
    + ["--vocab_file=" + VOCAB]
    for e, argv in tokenizer_args(tmp_path).items()
    if e.startswith("run_")
  }
  runs["run_classifier"] = [
    a for a in classifier_args(out / "c") if "--bert_config_file" not in a
  ] + ["--do_train"]
  text = str(FIXTURES / "encoder" / "extract_input.txt")
  return dict(
    runs,
    run_pretraining=[
      "--input_file=%s" % tmp_path,
      "--output_dir=%s" % (out / "p"),
      "--do_train",
    ],
    extract_features=[
      "--input_file=" + text,
      "--output_file=%s" % (out / "f.jsonl"),
      "--vocab_file=" + VOCAB,
      "--init_checkpoint=" + CKPT,
    ],
    **{
      "bert_tf.convert_checkpoint": [
        "--input=" + CKPT,
        "--output_dir=%s" % (out / "conv"),
      ],
      "bert_tf.export_checkpoint": [
        "--model_dir=%s" % tmp_path,
        "--output_dir=%s" % (out / "exp"),
      ],
      "bert_tf.export_saved_model": [
        "--task=encoder",
        "--checkpoint=" + CKPT,
        "--vocab_file=" + VOCAB,
        "--export_dir=%s" % (out / "sm"),
      ],
      "bert_tf.plot_attention": [
        "--init_checkpoint=" + CKPT,
        "--vocab_file=" + VOCAB,
        "--text=the cat sat",
        "--output_file=%s" % (out / "a.png"),
      ],
    },
  )


def test_every_config_is_checked_before_anything_is_built(
  tmp_path, defined_flags
):
  table = _config_takers(tmp_path)
  takers = sorted(
    e for e, f in defined_flags.items() if "bert_config_file" in f
  )
  assert sorted(table) == takers  # a new command needs a row here
  configs = {
    key: write_config(tmp_path / ("%s.json" % key), **{key: value})
    for key, (value, _) in _HOSTILE.items()
  }
  # (entry point, argv, key, the file the line names)
  cases = [
    (e, table[e] + ["--bert_config_file=%s" % configs[key]], key, configs[key])
    for e in takers
    for key in _HOSTILE
  ]
  for key, (value, _) in _HOSTILE.items():
    folder = artefacts.hf_folder(tmp_path / ("hf_" + key))
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(
      json.dumps(dict(config, **{key: value}))
    )
    cases.append(
      (
        "bert_tf.convert_checkpoint",
        [
          "--input=%s" % folder,
          "--input_format=hf",
          "--output_dir=%s" % (tmp_path / ("hf_out_" + key)),
        ],
        key,
        folder / "config.json",
      )
    )
  outcomes = run_cases([(e, argv) for e, argv, _, _ in cases])
  for (entry, _, key, config), outcome in zip(cases, outcomes):
    assert_one_error(
      outcome,
      str(config),
      "key '%s' %s" % (key, _HOSTILE[key][1]),
      name="%s %s" % (entry, key),
    )
  assert not (tmp_path / "out").exists()
  assert len(cases) == 4 * (len(takers) + 1)


def _edited_run(run, folder, change):
  """A copy of run folder `run` whose run_config.json `change` edits."""
  shutil.copytree(run, folder)
  path = folder / "run_config.json"
  record = json.loads(path.read_text())
  change(record)
  path.write_text(json.dumps(record))
  return folder


@pytest.mark.slow  # a tiny run_classifier run, then its exports: ~30 s
def test_a_run_config_that_lies_is_named(tmp_path):
  run = tmp_path / "run"
  ((code, stderr),) = run_cases(
    [("run_classifier", classifier_args(run) + ["--do_train"])]
  )
  assert code == 0, stderr[-2000:]
  huge = _edited_run(
    run,
    tmp_path / "huge",
    lambda r: r["bert_config"].update(hidden_size=10**9),
  )
  # A classifier's record saying "ner": its labels 0, 1 are no IOB2 tags.
  ner = _edited_run(run, tmp_path / "ner", lambda r: r.update(task="ner"))
  outcomes = run_cases(
    [
      (
        "bert_tf.export_saved_model",
        ["--checkpoint=%s" % folder, "--export_dir=%s" % (folder / "sm")],
      )
      for folder in (huge, ner)
    ]
  )
  recorded = "--checkpoint=%s (run_config.json)"
  assert_one_error(
    outcomes[0],
    recorded % huge,
    "key 'hidden_size' must be in [1, 16384], got 1000000000",
  )
  assert_one_error(
    outcomes[1],
    recorded % ner + ", task ner: labels 0,1: need distinct IOB2 tags",
    "does the record belong to this run?",
  )
  assert not (huge / "sm").exists() and not (ner / "sm").exists()
