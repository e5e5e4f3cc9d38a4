"""Flags that take effect only with another flag (or value).

`run_classifier.py --glue_submission_file=x.tsv` without `--do_predict`
exited 0 and wrote nothing; `--eval_every_steps` without `--do_train`,
`--masked_lm_prob` without `--dynamic_masking`, `--xnli_language` with
another task did nothing either. Each such dependency is declared once,
right after the flag's definition, like its range (`flag_checks`):

    flags.DEFINE_string("glue_submission_file", None, "...")
    flag_needs.requires("glue_submission_file", "do_predict")
    flag_needs.requires("predict_checkpoint=best", "do_eval", "do_predict")
    flag_needs.excludes("num_gpus", "use_tpu")
    flag_needs.requires("tpu_name", "use_tpu", warn=True)
    flag_needs.ignored("num_tpu_cores", "TPUStrategy uses every core")

The runner (`app.guarded`) checks them before any work: a flag given
without what it needs ends in one line naming both (`ERROR:
--glue_submission_file needs --do_predict`); where the original accepted
the combination and command lines rely on it (`warn=True`, `ignored`),
a warning says the flag does nothing. A flag counts as given when the
command line sets it to a value other than its default (or empty), so
spelling out a default is never refused. `tests/hostile/
test_flag_dependencies.py` runs every declared violation of every entry
point. TensorFlow-free.
"""

from absl import flags
from absl import logging

from bert_tf.io_utils import InputError


def _condition(text):
  """'flag', 'flag=value' or 'flag!=value' -> (flag, operator, value)."""
  for op in ("!=", "="):
    if op in text:
      name, value = text.split(op, 1)
      return name, op, value
  return text, None, None


def _holds(flag_values, condition):
  """Whether the condition holds; 'flag' alone: set (not None, False, 0 or
  empty). Values compare case-insensitively (--task_name=MRPC)."""
  name, op, value = _condition(condition)
  current = flag_values[name].value
  if op is None:
    return current not in (None, False, 0, "", [])
  same = str(current).lower() == value.lower()
  return same if op == "=" else current is not None and not same


def _flag_text(condition):
  name, op, value = _condition(condition)
  if op == "!=":
    return "--%s other than %s" % (name, value)
  return "--" + condition


class Requirement:
  """Flag `subject` ('flag' or 'flag=value') takes effect only if one of
  `needs` holds (`excludes`: only if none does; no `needs`: never).
  `warn`: a warning instead of a refusal."""

  def __init__(self, subject, needs, excludes=False, warn=False, why=None):
    self.subject, self.needs, self.excludes = subject, tuple(needs), excludes
    self.warn, self.why = warn or not needs, why

  @property
  def flag(self):
    return _condition(self.subject)[0]

  def problem(self, flag_values):
    """Why the rule is broken in the parsed `flag_values`, or None."""
    flag = flag_values[self.flag]
    if not flag.present or flag.value in (flag.default, "", []):
      return None
    if "=" in self.subject and not _holds(flag_values, self.subject):
      return None
    # A need this program does not define never holds.
    needs = [n for n in self.needs if _condition(n)[0] in flag_values]
    met = [n for n in needs if _holds(flag_values, n)]
    if not self.needs:
      text = "does nothing here"
    elif self.excludes:
      if not met:
        return None
      text = "does nothing with %s" % _flag_text(met[0])
    elif met:
      return None
    else:
      text = "%s %s" % (
        "does nothing without" if self.warn else "needs",
        " or ".join(_flag_text(n) for n in needs or self.needs),
      )
    return "--%s %s%s" % (
      self.subject,
      text,
      " (%s)" % self.why if self.why else "",
    )


def _declare(rule, flag_values):
  def check(_):
    return True  # Needs the other flags' final values: the runner checks.

  check.flag_requirement = rule
  flags.register_validator(rule.flag, check, flag_values=flag_values)


def requires(subject, *needs, warn=False, why=None, flag_values=flags.FLAGS):
  """Flag `subject` ('flag' or 'flag=value') takes effect only when one of
  `needs` holds ('flag': set; 'flag=value'; 'flag!=value'); given
  without, it is refused (`warn`: warned about). `why` ends the line."""
  _declare(Requirement(subject, needs, False, warn, why), flag_values)


def excludes(subject, *others, warn=False, why=None, flag_values=flags.FLAGS):
  """Flag `subject` does nothing when one of `others` holds."""
  _declare(Requirement(subject, others, True, warn, why), flag_values)


def ignored(subject, why, flag_values=flags.FLAGS):
  """An original flag, accepted for compatibility, that does nothing here:
  given, it is warned about (`why`: what happens instead)."""
  _declare(Requirement(subject, (), why=why), flag_values)


def declared(flag):
  """The `Requirement`s declared for absl `flag`."""
  return [
    validator.checker.flag_requirement
    for validator in flag.validators
    if hasattr(getattr(validator, "checker", None), "flag_requirement")
  ]


def check(flag_values):
  """InputError for the first flag given (in definition order) that cannot
  take effect; a warning for each given one the original accepted."""
  warnings = []
  for name in flag_values:
    if name != flag_values[name].name:
      continue  # a short name
    for rule in declared(flag_values[name]):
      problem = rule.problem(flag_values)
      if problem and not rule.warn:
        raise InputError(problem)
      if problem:
        warnings.append(problem)
  for problem in warnings:
    logging.warning("%s", problem)
