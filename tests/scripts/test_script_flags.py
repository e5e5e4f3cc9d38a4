"""Every root script in this process (`make test-fast`): its original flags
with the original defaults, and a bad flag combination that its Job refuses
in one `ERROR:` line before any output. The scripts' runs end to end are
the `process` tests next to this file."""

import contextlib
import importlib

from absl import flags
import pytest

from bert_tf.runtime import app
from tests.helpers.checkpoints import CKPT
from tests.helpers.checkpoints import config_file
from tests.helpers.checkpoints import VOCAB
from tests.helpers.scripts import GLUE
from tests.helpers.scripts import NER_DATA

SCRIPTS = (
  "run_classifier",
  "run_squad",
  "run_ner",
  "run_multiple_choice",
  "run_pretraining",
  "extract_features",
)


@contextlib.contextmanager
def _script(name):
  """Script module `name` with its flags defined in an empty global FLAGS,
  as in its own program; FLAGS is as it was afterwards (absl keeps a
  FlagValues' flags in its `__dict__`)."""
  state = dict(vars(flags.FLAGS))
  vars(flags.FLAGS).update(vars(flags.FlagValues()))
  try:
    module = importlib.import_module(name)
    module.define_flags()
    yield module
  finally:
    vars(flags.FLAGS).clear()
    vars(flags.FLAGS).update(state)


# Flags of the original scripts (google-research/bert) with their defaults;
# run_ner and run_multiple_choice: run_classifier's, with the paper's SWAG
# recipe for multiple choice, and the NER feature modes.
ORIGINAL_DEFAULTS = {
  "run_classifier": {
    "data_dir": None,
    "task_name": None,
    "do_lower_case": True,
    "max_seq_length": 128,
    "train_batch_size": 32,
    "eval_batch_size": 8,
    "predict_batch_size": 8,
    "learning_rate": 5e-5,
    "num_train_epochs": 3.0,
    "warmup_proportion": 0.1,
    "save_checkpoints_steps": 1000,
    "iterations_per_loop": 1000,
    "use_tpu": False,
  },
  "run_squad": {
    "train_file": None,
    "predict_file": None,
    "max_seq_length": 384,
    "doc_stride": 128,
    "max_query_length": 64,
    "train_batch_size": 32,
    "predict_batch_size": 8,
    "learning_rate": 5e-5,
    "n_best_size": 20,
    "max_answer_length": 30,
    "version_2_with_negative": False,
    "null_score_diff_threshold": 0.0,
    "verbose_logging": False,
  },
  "run_ner": {
    "data_dir": None,
    "max_seq_length": 128,
    "train_batch_size": 32,
    "learning_rate": 5e-5,
    "tag_scheme": "iob2",
    "feature_mode": "fine_tune",
    "lstm_units": 768,
  },
  "run_multiple_choice": {
    "data_dir": None,
    "max_seq_length": 128,
    "train_batch_size": 16,
    "learning_rate": 2e-5,
    "num_train_epochs": 3.0,
  },
  "run_pretraining": {
    "input_file": None,
    "max_seq_length": 128,
    "max_predictions_per_seq": 20,
    "train_batch_size": 32,
    "eval_batch_size": 8,
    "learning_rate": 5e-5,
    "num_train_steps": 100000,
    "num_warmup_steps": 10000,
    "max_eval_steps": 100,
    "save_checkpoints_steps": 1000,
  },
  "extract_features": {
    "input_file": None,
    "output_file": None,
    "layers": "-1,-2,-3,-4",
    "do_lower_case": True,
    "max_seq_length": 128,
    "batch_size": 32,
    "num_tpu_cores": 8,
    "use_one_hot_embeddings": False,
  },
}


def test_every_root_script_is_covered():
  assert set(ORIGINAL_DEFAULTS) == set(SCRIPTS)


@pytest.mark.parametrize("name", SCRIPTS)
def test_original_flags_keep_their_defaults(name):
  with _script(name):
    defaults = {
      flag: flags.FLAGS[flag].default
      for flag in ORIGINAL_DEFAULTS[name]
      if flag in flags.FLAGS
    }
  assert defaults == ORIGINAL_DEFAULTS[name]


_MODEL = [
  "--bert_config_file=%s" % config_file("ckpt_b"),
  "--vocab_file=" + VOCAB,
]
# (script, argv, its one error line).
_BAD = [
  (
    "run_classifier",
    [
      "--task_name=cola",
      "--data_dir=%s" % (GLUE / "CoLA"),
      "--do_train",
      "--glue_submission_file=cola.tsv",
    ],
    "--glue_submission_file needs --do_predict",
  ),
  (
    "run_squad",
    ["--do_train", "--do_predict"],
    "If `do_train` is True, then `train_file` must be specified.",
  ),
  (
    "run_ner",
    ["--data_dir=%s" % NER_DATA, "--do_train", "--feature_mode=last_two"],
    "--feature_mode=last_two: expected one of fine_tune, embeddings, ",
  ),
  ("run_multiple_choice", ["--do_train"], "--data_dir is required"),
  (
    "run_pretraining",
    ["--input_file=train.tf_record", "--do_train", "--do_whole_word_mask"],
    "--do_whole_word_mask needs --dynamic_masking (static masks are made ",
  ),
  (
    "extract_features",
    ["--init_checkpoint=" + CKPT, "--layers=-1,last"],
    "--layers=-1,last: expected comma-separated integers",
  ),
]


@pytest.mark.parametrize(
  "name,argv,error", _BAD, ids=[name for name, _, _ in _BAD]
)
def test_a_bad_combination_is_one_line_before_any_output(
  name, argv, error, tmp_path, capsys
):
  out = tmp_path / "out"
  if name == "extract_features":
    (tmp_path / "input.txt").write_text("a sentence\n")
    argv = argv + [
      "--input_file=%s" % (tmp_path / "input.txt"),
      "--output_file=%s" % out,
    ]
  else:
    argv = argv + ["--output_dir=%s" % out]
  with _script(name) as module:
    app.parse_flags([name + ".py"] + _MODEL + argv)
    with pytest.raises(SystemExit) as exit_:
      app.guarded(module.main)([])
  assert exit_.value.code == 1
  lines = capsys.readouterr().err.splitlines()
  assert [line for line in lines if line.startswith("ERROR")] == [lines[-1]]
  assert lines[-1].startswith("ERROR: " + error), lines[-1]
  assert not out.exists()
