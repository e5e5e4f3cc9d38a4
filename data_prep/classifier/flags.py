"""Flags that pick a classifier task, shared by the data CLI and run_classifier.

`--task_name=tsv` reads a user's own `train.tsv` / `dev.tsv` / `test.tsv`
from `--data_dir` (tab-separated, no quoting, like the GLUE files):
  --text_a_column=N     column of the first text (0-based)
  --text_b_column=N     column of the second text, for pair tasks
  --label_column=N      column of the label (not read from test.tsv, which
                        gets a dummy label as the original's GLUE test sets)
  --labels=a,b,c        the label strings, in id order; or instead
  --regression          labels are numbers (one output, MSE, like STS-B)
  --skip_header         the files' first line is a header
  --multi_label         each label cell is a set of labels (possibly empty)
                        joined by --multi_label_separator (default ","):
                        sigmoid outputs, binary cross-entropy, F1 metrics

Example:
    define_task_flags()       # at module level, next to the other flags
    processor = processor_from_flags(flags.FLAGS)
"""

from absl import flags

from bert_tf.io_utils import InputError
from bert_tf.runtime import flag_checks
from bert_tf.runtime import flag_needs
from data_prep.classifier import tasks as classifier_tasks

_SEPARATOR = ","  # --multi_label_separator's default


def define_task_flags():
  """Defines the --task_name=tsv options and --xnli_language."""
  flags.DEFINE_integer(
    "text_a_column", None, "task_name=tsv: 0-based column of the first text."
  )
  flag_checks.non_negative("text_a_column")
  flags.DEFINE_integer(
    "text_b_column",
    None,
    "task_name=tsv: 0-based column of the second text (pair tasks only).",
  )
  flag_checks.non_negative("text_b_column")
  flags.DEFINE_integer(
    "label_column",
    None,
    "task_name=tsv: 0-based column of the label (ignored for test.tsv).",
  )
  flag_checks.non_negative("label_column")
  flags.DEFINE_list(
    "labels",
    None,
    "task_name=tsv: comma-separated label strings in id "
    "order (classification).",
  )
  flags.DEFINE_bool(
    "regression", False, "task_name=tsv: labels are real numbers (regression)."
  )
  flags.DEFINE_bool(
    "skip_header",
    False,
    "task_name=tsv: the first line of each file is a header.",
  )
  flags.DEFINE_bool(
    "multi_label",
    False,
    "task_name=tsv: each label cell holds a set of --labels "
    "(possibly empty), joined by --multi_label_separator.",
  )
  flags.DEFINE_string(
    "multi_label_separator",
    _SEPARATOR,
    "task_name=tsv --multi_label: separator of the labels in a label cell.",
  )
  flags.DEFINE_string(
    "xnli_language",
    "zh",
    "task_name=xnli: language of the training file "
    "multinli/multinli.train.<lang>.tsv and of the "
    "xnli.dev/test.tsv rows kept (the original hard-codes "
    "zh).",
  )
  # Another task reads its own columns and labels.
  for name in _TSV_ONLY:
    flag_needs.requires(name, "task_name=tsv")
  flag_needs.requires("multi_label_separator", "multi_label")
  flag_needs.requires("xnli_language", "task_name=xnli")


# Options of --task_name=tsv only: another task would silently ignore them.
_TSV_ONLY = (
  "text_a_column",
  "text_b_column",
  "label_column",
  "labels",
  "regression",
  "skip_header",
  "multi_label",
  "multi_label_separator",
)


def processor_from_flags(flag_values):
  """A ClassifierProcessor for --task_name/--data_dir and the options above
  (`flag_values`: parsed flags or a Job config)."""
  tsv_options = {}
  given = [
    name
    for name in _TSV_ONLY
    if getattr(flag_values, name) not in (None, False, _SEPARATOR)
  ]
  if given and (flag_values.task_name or "").lower() != "tsv":
    raise InputError(
      "--%s is for --task_name=tsv; %s reads its own columns "
      "and labels" % (given[0], flag_values.task_name)
    )
  if (flag_values.task_name or "").lower() == "tsv":
    tsv_options = dict(
      text_a_column=flag_values.text_a_column,
      text_b_column=flag_values.text_b_column,
      label_column=flag_values.label_column,
      labels=flag_values.labels,
      regression=flag_values.regression,
      skip_header=flag_values.skip_header,
      multi_label=flag_values.multi_label,
      multi_label_separator=flag_values.multi_label_separator,
    )
  return classifier_tasks.get_processor(
    flag_values.task_name,
    flag_values.data_dir,
    language=flag_values.xnli_language,
    **tsv_options,
  )
