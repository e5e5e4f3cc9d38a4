"""Class 1 (hangs and nonsense from numeric flags): every integer/float flag
of every entry point has a range in `bert_tf/runtime/flag_checks.py`, and a
value outside it stops with one line before any work."""

import functools
import math

from absl import flags
import pytest

from bert_tf.runtime import flag_checks
from tests.helpers.checkpoints import VOCAB
from tests.helpers.cli import assert_one_error
from tests.helpers.cli import ENTRY_POINTS
from tests.helpers.cli import numeric_flags
from tests.helpers.cli import run_cases
from tests.helpers.processes import run_command


@pytest.mark.process
def test_every_numeric_flag_of_every_entry_point_has_a_range():
  found = numeric_flags()
  assert set(found) == set(ENTRY_POINTS)
  # The training scripts define dozens; a lost import would show as none.
  assert {
    "save_checkpoints_steps",
    "learning_rate",
    "warmup_proportion",
    "keep_checkpoint_max",
  } <= set(found["run_classifier"])
  assert {"doc_stride", "max_query_length"} <= set(found["data_prep.squad"])
  missing = {
    entry: sorted(name for name, allowed in names.items() if allowed is None)
    for entry, names in found.items()
  }
  assert not any(missing.values()), (
    "numeric flags without a range declared where they are defined: %s"
    % {e: m for e, m in missing.items() if m}
  )


@functools.cache
def _declared(entry):
  """{numeric flag: its declared `Range`} of `entry`'s definitions."""
  (names,) = numeric_flags([entry]).values()
  return {n: flag_checks.Range(*r) for n, r in names.items() if r}


@pytest.mark.process  # one child process loads the entry points
@pytest.mark.parametrize(
  "name,value,error",
  [
    ("train_batch_size", 0, "must be >= 1"),
    ("save_checkpoints_steps", -3, "must be >= 0"),
    ("warmup_proportion", 1.5, "must be <= 1"),
    ("warmup_proportion", -0.1, "must be >= 0"),
    ("learning_rate", math.nan, "must be a finite number"),
    ("learning_rate", math.inf, "must be a finite number"),
    ("eval_every_epochs", 0.0, "must be > 0"),
    ("seed", 2**32, "must be <= 4294967295"),
  ],
)
def test_a_declared_range_rejects(name, value, error):
  assert _declared("run_classifier")[name].error(value) == error


@pytest.mark.process  # one child process loads the entry points
@pytest.mark.parametrize(
  "name,value",
  [
    ("save_checkpoints_steps", 0),
    ("keep_checkpoint_max", 0),
    ("warmup_proportion", 1.0),
    ("learning_rate", 0.0),
    ("seed", None),
    ("text_b_column", 0),
    ("max_seq_length", 3),
  ],
)
def test_a_declared_range_keeps_the_original_meanings(name, value):
  assert _declared("run_classifier")[name].error(value) is None


def test_the_range_is_checked_at_parsing():
  values = flags.FlagValues()
  flags.DEFINE_integer("doc_stride", 128, "", flag_values=values)
  flag_checks.positive("doc_stride", flag_values=values)
  with pytest.raises(flags.IllegalFlagValueError, match="must be >= 1"):
    values(["prog", "--doc_stride=0"])


# (entry point, bad flag): each must fail before main does anything.
_BAD = [
  ("run_classifier", "--save_checkpoints_steps=-3"),
  ("run_classifier", "--train_batch_size=0"),
  ("run_classifier", "--eval_batch_size=-1"),
  ("run_classifier", "--keep_checkpoint_max=-1"),
  ("run_classifier", "--warmup_proportion=1.5"),
  ("run_classifier", "--learning_rate=nan"),
  ("run_classifier", "--learning_rate=-0.001"),
  ("run_classifier", "--text_a_column=-1"),
  ("run_classifier", "--iterations_per_loop=0"),
  ("run_squad", "--max_answer_length=0"),
  ("run_squad", "--doc_stride=0"),
  ("run_squad", "--predict_batch_size=0"),
  ("run_squad", "--num_train_epochs=inf"),
  ("run_pretraining", "--num_train_steps=-1"),
  ("run_pretraining", "--masked_lm_prob=2.0"),
  ("run_pretraining", "--max_eval_steps=0"),
  ("run_ner", "--lstm_units=0"),
  ("run_ner", "--num_frozen_layers=-2"),
  ("run_multiple_choice", "--gradient_accumulation_steps=0"),
  ("run_multiple_choice", "--eval_every_steps=0"),
  ("extract_features", "--batch_size=0"),
  ("extract_features", "--max_seq_length=1"),
  ("data_prep.squad", "--max_query_length=0"),
  ("data_prep.squad_predictions", "--n_best_size=0"),
  ("data_prep.squad_predictions", "--null_score_diff_threshold=inf"),
  ("data_prep.classifier", "--pad_to_multiple_of=-1"),
  ("data_prep.create_pretraining_data", "--dupe_factor=0"),
  ("data_prep.create_pretraining_data", "--short_seq_prob=1.5"),
  ("data_prep.create_pretraining_data", "--random_seed=-1"),
  ("bert_tf.export_saved_model", "--max_seq_length=2"),
  ("bert_tf.predict", "--batch_size=0"),
  ("bert_tf.fetch_model", "--retries=-1"),
]


@pytest.mark.process
def test_out_of_range_flags_stop_with_one_line_before_any_work(tmp_path):
  out = tmp_path / "out"
  cases = [
    (
      entry,
      [flag, "--output_dir=%s" % out] if entry.startswith("run_") else [flag],
    )
    for entry, flag in _BAD
  ]
  outcomes = run_cases(cases)
  for (entry, flag), outcome in zip(_BAD, outcomes):
    name, value = flag[2:].split("=")
    line = assert_one_error(
      outcome, "--%s=" % name, "must be", name="%s %s" % (entry, flag)
    )
    assert line.startswith("ERROR: flag --%s=" % name), line
  assert not out.exists()


@pytest.mark.process
def test_the_command_lines_go_through_run_app(tmp_path):
  # The hang, as typed: ends at once with one line.
  outcome = run_command(
    [
      "run_classifier.py",
      "--task_name=MRPC",
      "--save_checkpoints_steps=-3",
      "--do_train",
      "--output_dir=%s" % tmp_path,
    ]
  )
  assert_one_error(outcome, "--save_checkpoints_steps=-3: must be >= 0")
  outcome = run_command(["-m", "data_prep.squad", "--doc_stride=0"])
  assert_one_error(outcome, "--doc_stride=0: must be >= 1")


@pytest.mark.process
@pytest.mark.parametrize(
  "args,line",
  [
    # absl's own parse errors: one line too, not absl's two.
    (
      ["run_classifier.py", "--max_seq_length=abc"],
      "ERROR: flag --max_seq_length=abc: invalid literal for int() with base "
      "10: 'abc'",
    ),
    (
      ["-m", "data_prep.squad", "--doc_stride=1.5"],
      "ERROR: flag --doc_stride=1.5: invalid literal for int() with base 10: "
      "'1.5'",
    ),
    (
      ["-m", "data_prep.ner", "--runner=NoSuchRunner"],
      "ERROR: flag --runner=NoSuchRunner: value should be one of <DirectRunner|"
      "DataflowRunner|FlinkRunner|SparkRunner|PortableRunner|PrismRunner>",
    ),
    (
      ["-m", "bert_tf.plot_run", "--no_such_flag"],
      "ERROR: Unknown command line flag 'no_such_flag'",
    ),
  ],
)
def test_flags_that_do_not_parse_end_in_one_line(args, line):
  outcome = run_command(args)
  assert assert_one_error(outcome) == line


@pytest.mark.process
def test_a_mistyped_beam_option_is_refused_not_ignored(tmp_path):
  # Beam alone would log a warning and run on one worker.
  conll = tmp_path / "train.txt"
  conll.write_text("John B-PER\nflew O\n")
  outcome = run_command(
    [
      "-m",
      "data_prep.ner",
      "--input_file=%s" % conll,
      "--vocab_file=%s" % VOCAB,
      "--output_file=%s" % (tmp_path / "o"),
      "--runner=DirectRunner",
      "--direct_num_worker=2",
    ]
  )
  assert assert_one_error(outcome) == (
    "ERROR: --direct_num_worker=2: neither a flag of this command nor a "
    "Beam pipeline option"
  )
  assert sorted(p.name for p in tmp_path.iterdir()) == ["train.txt"]
