"""Runs hostile cases through any entry point and checks the one-line promise.

Every case runs `main` the way the command line does (`app.guarded`:
flag ranges, then `main` inside `run_cli`); many cases of many entry points
share one process, so TensorFlow loads once.

Example:
    outcomes = run_cases([("run_squad", ["--train_batch_size=0"]),
                          ("data_prep.squad", ["--doc_stride=-1"])])
    assert_one_error(outcomes[0], "--train_batch_size=0")
"""

import json
import os
import subprocess
import sys

from tests.conftest import REPO

# Entry point -> the module holding its `main` (and `define_flags`, if its
# flags are not defined at import).
ENTRY_POINTS = {
    "run_classifier": "run_classifier",
    "run_squad": "run_squad",
    "run_pretraining": "run_pretraining",
    "run_ner": "run_ner",
    "run_multiple_choice": "run_multiple_choice",
    "extract_features": "extract_features",
    "data_prep.squad": "data_prep.squad.__main__",
    "data_prep.squad_predictions": "data_prep.squad.predictions",
    "data_prep.classifier": "data_prep.classifier.__main__",
    "data_prep.ner": "data_prep.ner.__main__",
    "data_prep.multiple_choice": "data_prep.multiple_choice.__main__",
    "data_prep.create_pretraining_data":
        "data_prep.pretraining.create_pretraining_data",
    "bert_tf.convert_checkpoint": "bert_tf.cli.convert_checkpoint",
    "bert_tf.export_checkpoint": "bert_tf.cli.export_checkpoint",
    "bert_tf.export_saved_model": "bert_tf.cli.export_saved_model",
    "bert_tf.predict": "bert_tf.cli.predict",
    "bert_tf.fetch_model": "bert_tf.cli.fetch_model",
    "bert_tf.plot_run": "bert_tf.cli.plot_run",
}

# Loads one entry point's flags at a time (dropping the previous one's and
# re-importing, since scripts define flags at import), runs each case and
# prints [[exit code, stderr], ...]. An escaped exception is reported with
# its traceback, so the checks below see it.
_DRIVER = r"""
import contextlib, importlib, io, json, logging, sys, traceback
from absl import flags
from absl import logging as absl_logging
from bert_tf.cli import app
ENTRY_POINTS = json.loads(sys.argv[1])
FLAGS = flags.FLAGS
BUILTIN = set(FLAGS)
loaded = None

def load(entry):
  global loaded
  if loaded == entry:
    return sys.modules[ENTRY_POINTS[entry]]
  for name in set(FLAGS) - BUILTIN:
    delattr(FLAGS, name)
  sys.modules.pop(ENTRY_POINTS[entry], None)
  module = importlib.import_module(ENTRY_POINTS[entry])
  if hasattr(module, "define_flags"):
    module.define_flags()
  loaded = entry
  return module

out = []
for entry, argv in json.loads(sys.argv[2]):
  if argv == "LIST":
    load(entry)
    out.append([0, json.dumps(app.numeric_flags(FLAGS))])
    continue
  module = load(entry)
  FLAGS.unparse_flags()
  FLAGS([entry] + argv)
  err = io.StringIO()
  handler = logging.StreamHandler(err)
  absl_logging.get_absl_logger().addHandler(handler)
  code = 0
  with contextlib.redirect_stderr(err):
    try:
      app.guarded(module.main)([])
    except SystemExit as e:
      code = e.code
    except BaseException:  # pylint: disable=broad-except
      code = "escaped"
      traceback.print_exc()
  absl_logging.get_absl_logger().removeHandler(handler)
  out.append([code, err.getvalue()])
print(json.dumps(out))
"""


def run_cases(cases, timeout=300):
  """[(entry point, argv), ...] -> [(exit code, stderr), ...] in order."""
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
  result = subprocess.run(
      [sys.executable, "-c", _DRIVER, json.dumps(ENTRY_POINTS),
       json.dumps([[entry, argv if argv == "LIST" else list(argv)]
                   for entry, argv in cases])],
      cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout,
      check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  return [tuple(o) for o in json.loads(result.stdout.splitlines()[-1])]


def numeric_flags(entries=tuple(ENTRY_POINTS)):
  """{entry point: its integer/float flag names}."""
  outcomes = run_cases([(entry, "LIST") for entry in entries])
  return {entry: json.loads(text) for entry, (_, text) in
          zip(entries, outcomes)}


def run_command(args, timeout=300, **kwargs):
  """Runs `python args...` from the repo root; returns (exit code, stderr)."""
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
  result = subprocess.run([sys.executable] + list(args), cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=timeout,
                          check=False, **kwargs)
  return result.returncode, result.stderr


def assert_one_error(outcome, *culprits, name=""):
  """Non-zero exit, no traceback, exactly one `ERROR:` line, and that line
  names every culprit (a path, flag, key or file:line)."""
  code, stderr = outcome
  assert code not in (0, "escaped"), (name, code, stderr[-2000:])
  assert "Traceback" not in stderr, (name, stderr[-2000:])
  errors = [l for l in stderr.splitlines() if l.startswith("ERROR:")]
  assert len(errors) == 1, (name, stderr[-2000:])
  for culprit in culprits:
    assert str(culprit) in errors[0], (name, culprit, errors[0])
  assert ".tmp-" not in errors[0], (name, errors[0])
  return errors[0]


# Tiny model and data shared by the hostile modules (fixtures/encoder/ckpt_b:
# 1 layer, H=32, its 3000-token vocabulary; the GLUE fixture rows).
ENCODER = REPO / "tests" / "fixtures" / "encoder"
GLUE = REPO / "tests" / "fixtures" / "glue"
TINY_CONFIG = {
    "attention_probs_dropout_prob": 0.1, "hidden_act": "relu",
    "hidden_dropout_prob": 0.1, "hidden_size": 32, "initializer_range": 0.1,
    "intermediate_size": 64, "max_position_embeddings": 512,
    "num_attention_heads": 2, "num_hidden_layers": 1, "type_vocab_size": 2,
    "vocab_size": 3000}
VOCAB = str(ENCODER / "vocab_small.txt")
CKPT = str(ENCODER / "ckpt_b" / "bert_model.ckpt")


def write_config(path, **changes):
  """TINY_CONFIG with `changes` as a bert_config.json; returns its path."""
  path.write_text(json.dumps(dict(TINY_CONFIG, **changes)))
  return str(path)


def classifier_args(output_dir, data_dir=GLUE / "MRPC", task="MRPC",
                    config=str(ENCODER / "ckpt_b" / "bert_config.json")):
  """run_classifier flags for a few steps of the tiny model."""
  return ["--task_name=%s" % task, "--data_dir=%s" % data_dir,
          "--vocab_file=%s" % VOCAB, "--bert_config_file=%s" % config,
          "--max_seq_length=32", "--train_batch_size=2",
          "--num_train_epochs=1", "--save_checkpoints_steps=0",
          "--output_dir=%s" % output_dir, "--noprogress"]
