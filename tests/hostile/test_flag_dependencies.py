"""Class 6 (flags silently ignored), generated from the flag definitions:
each dependency an entry point declares next to a flag's definition
(`flag_needs.requires` / `excludes` / `ignored`) is broken on the command
line, and the command must stop in one line naming both flags before any
work -- or, where the original accepted the combination, warn and go on."""

import json

from absl import flags
import pytest

from bert_tf.io_utils import InputError
from bert_tf.runtime import flag_needs
from tests.helpers.cli import assert_one_error
from tests.helpers.cli import ENTRY_POINTS
from tests.helpers.cli import NEEDS
from tests.helpers.cli import run_cases

# Dependencies that must stay declared (a lost declaration would shrink the
# generated table without a word): (entry point, flag).
_KNOWN = {
  ("run_classifier", "glue_submission_file"),
  ("run_classifier", "train_records"),
  ("run_classifier", "eval_every_steps"),
  ("run_classifier", "eval_every_epochs"),
  ("run_classifier", "best_metric"),
  ("run_classifier", "best_mode"),
  ("run_classifier", "early_stopping_patience"),
  ("run_classifier", "multi_label_separator"),
  ("run_classifier", "xnli_language"),
  ("data_prep.classifier", "label_column"),
  ("run_squad", "verbose_logging"),
  ("run_squad", "null_score_diff_threshold"),
  ("run_ner", "lstm_units"),
  ("run_multiple_choice", "num_gpus"),
  ("run_multiple_choice", "tpu_name"),
  ("run_pretraining", "do_whole_word_mask"),
  ("run_pretraining", "masked_lm_prob"),
  ("run_pretraining", "num_tpu_cores"),
  ("extract_features", "use_tpu"),
  ("data_prep.create_pretraining_data", "shard_size_mb"),
  ("data_prep.create_pretraining_data", "num_workers"),
}


def _name(condition):
  return condition.replace("!=", "=").split("=")[0]


def _value(name, info, tmp_path):
  """`--name=...`: a value other than the flag's default, in its range."""
  default = info["default"]
  if info["type"] == "bool":
    return "--%s%s" % ("no" if default else "", name)
  if info["enum"]:
    value = next(v for v in info["enum"] if v != default)
  elif info["type"] in ("int", "float"):
    low, high, low_open = info["range"] or (None, None, False)
    value = next(
      v
      for v in (1, 2, 3)
      if v != default
      and (low is None or v > low or (v == low and not low_open))
      and (high is None or v <= high)
    )
  else:  # strings and lists: a path where nothing may appear
    value = tmp_path / name
  return "--%s=%s" % (name, value)


def _set(condition, infos, tmp_path):
  """Command-line flags that make `condition` hold."""
  name = _name(condition)
  if "!=" in condition:
    excluded = condition.split("!=")[1]
    other = [v for v in infos[name]["enum"] or ["other"] if v != excluded]
    return ["--%s=%s" % (name, other[0])]
  if "=" in condition:
    return ["--" + condition]
  return [_value(name, infos[name], tmp_path)]


def _violations(entry, infos, tmp_path):
  """(entry, argv breaking the rule, (subject, the needs `entry` defines,
  excludes, warn)) for each rule declared in `entry`."""
  cases = []
  for infos_of_flag in infos.values():
    for subject, needs, excludes, warn in infos_of_flag["rules"]:
      defined = [n for n in needs if _name(n) in infos]
      argv = _set(subject, infos, tmp_path)
      if excludes:
        argv += _set(defined[0], infos, tmp_path)
      cases.append((entry, argv, (subject, defined, excludes, warn)))
  return cases


@pytest.mark.process
def test_every_declared_dependency_is_refused_or_warned_about(tmp_path):
  entries = sorted(ENTRY_POINTS)
  declared = {
    entry: json.loads(text)
    for entry, (_, text) in zip(
      entries, run_cases([(e, NEEDS) for e in entries])
    )
  }
  found = {
    (entry, name)
    for entry, infos in declared.items()
    for name, info in infos.items()
    if info["rules"]
  }
  assert _KNOWN <= found, sorted(_KNOWN - found)
  cases = [
    case
    for entry in entries
    for case in _violations(entry, declared[entry], tmp_path)
  ]
  outcomes = run_cases([(entry, argv) for entry, argv, _ in cases])
  refused = warned = 0
  for (entry, argv, rule), outcome in zip(cases, outcomes):
    subject, needs, excludes, warn = rule
    name = "%s %s" % (entry, " ".join(argv))
    if not warn:
      line = assert_one_error(
        outcome, *["--" + _name(n) for n in needs], name=name
      )
      assert line.startswith(
        "ERROR: --%s %s "
        % (subject, "does nothing with" if excludes else "needs")
      ), (name, line)
      refused += 1
      continue
    code, stderr = outcome
    assert code != "escaped" and "Traceback" not in stderr, (name, stderr)
    said = [
      l for l in stderr.splitlines() if "--%s does nothing " % subject in l
    ]
    assert len(said) == 1, (name, stderr[-2000:])
    assert all("--" + _name(n) in said[0] for n in needs), (name, said)
    warned += 1
  assert not list(tmp_path.iterdir())  # nothing written, nothing created
  assert refused >= 90 and warned >= 30, (refused, warned)


def _flags(define):
  values = flags.FlagValues()
  for name, default in define.items():
    if isinstance(default, bool):
      flags.DEFINE_bool(name, default, "", flag_values=values)
    else:
      flags.DEFINE_string(name, default, "", flag_values=values)
  return values


_DEFINE = {
  "do_predict": False,
  "glue": None,
  "task": None,
  "lang": "zh",
  "mode": "fine_tune",
  "units": "768",
  "ckpt": "latest",
  "use_tpu": False,
  "gpus": None,
  "tpu_name": None,
  "cores": "8",
  "a": None,
  "best": None,
}


def _declared():
  values = _flags(_DEFINE)
  for args, kwargs in [
    (("glue", "do_predict"), {}),
    (("lang", "task=xnli"), {}),
    (("units", "mode!=fine_tune"), {}),
    (("ckpt=best", "do_predict"), {}),
    (("best", "a", "not_defined_here"), {}),
    (("tpu_name", "use_tpu"), {"warn": True}),
  ]:
    flag_needs.requires(*args, flag_values=values, **kwargs)
  flag_needs.excludes("gpus", "use_tpu", flag_values=values)
  flag_needs.ignored("cores", "TPUStrategy uses them all", flag_values=values)
  return values


@pytest.mark.parametrize(
  "argv,error",
  [
    (["--glue=x"], "--glue needs --do_predict"),
    (["--glue=x", "--do_predict"], None),
    (["--glue="], None),  # empty: not given
    (["--lang=zh"], None),  # the default spelled out
    (["--lang=de", "--task=MRPC"], "--lang needs --task=xnli"),
    (["--lang=de", "--task=XNLI"], None),
    (["--units=8"], "--units needs --mode other than fine_tune"),
    (["--units=8", "--mode=last"], None),
    (["--ckpt=latest"], None),
    (["--ckpt=best"], "--ckpt=best needs --do_predict"),
    (["--best=f1"], "--best needs --a"),  # an undefined need is not named
    (["--best=f1", "--a=1"], None),
    (["--gpus=2", "--use_tpu"], "--gpus does nothing with --use_tpu"),
    (["--gpus=2"], None),
    # The first refusal in definition order; warnings wait for none.
    (["--tpu_name=t", "--glue=x", "--lang=de"], "--glue needs --do_predict"),
  ],
)
def test_a_dependency_refuses_only_what_cannot_take_effect(argv, error):
  values = _declared()
  values(["prog"] + argv)
  if error is None:
    flag_needs.check(values)
    return
  with pytest.raises(InputError) as e:
    flag_needs.check(values)
  assert str(e.value) == error


def test_what_the_original_accepted_is_warned_about(caplog):
  values = _declared()
  values(["prog", "--tpu_name=t", "--cores=4", "--use_tpu=false"])
  flag_needs.check(values)
  assert [r.getMessage() for r in caplog.records] == [
    "--tpu_name does nothing without --use_tpu",
    "--cores does nothing here (TPUStrategy uses them all)",
  ]
  values = _declared()
  values(["prog", "--cores=4"])
  values.tpu_name = "set by a program, not typed"
  caplog.clear()
  flag_needs.check(values)
  assert [r.getMessage() for r in caplog.records] == [
    "--cores does nothing here (TPUStrategy uses them all)"
  ]
