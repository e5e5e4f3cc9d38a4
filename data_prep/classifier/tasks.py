"""The classifier tasks as data: which file and columns each split reads.

One table replaces the original's per-task processor classes. The original
tasks (cola, mnli, mrpc, xnli) keep their exact files, columns, header
handling, dummy test labels and guids (section 4 of the reference); the other
GLUE tasks follow the GLUE files' layouts. `fakenews` reads the WSDM 2019
Cup fake-news pair task's CSV files as ByteDance published them on Kaggle.
`tsv` describes a user's own files through options.

Example:
    processor = get_processor("mrpc", "glue/MRPC")
    examples = processor.get_examples("train")
    labels = processor.get_labels()        # ["0", "1"]; None for regression
"""

import collections

from bert_tf.io_utils import InputError
from data_prep.classifier.processor import ClassifierProcessor

# file: relative to data_dir ("{language}" is filled in for xnli).
# text_a/text_b/label: column indices (negative = from the end); label None =
#   test set, every example gets the task's dummy label.
# skip_header: drop the file's first line.
# guid_prefix: "%s-%s" % (guid_prefix or split, row index or guid_column).
# keep_if: (column, value): other rows are skipped (xnli's language filter).
# label_aliases: label spellings mapped to a label of the task.
# header: the column names the file's first line must start with (a file
#   saved with another column order is refused, not misread).
SplitSpec = collections.namedtuple(
  "SplitSpec",
  "file text_a text_b label skip_header guid_prefix "
  "guid_column keep_if label_aliases header",
  defaults=(None, None, None, None, None),
)

# labels: get_labels() order (= label ids); None means regression.
# multi_label_separator: set for multi-label tasks, whose label column holds
#   a set of labels joined by it (may be empty).
# file_format: "tsv" (unquoted, as the original reads) or "csv" (quoted).
TaskSpec = collections.namedtuple(
  "TaskSpec",
  "name labels splits multi_label_separator file_format",
  defaults=(None, "tsv"),
)


def _glue_pair(text_a, text_b, label, test_a, test_b):
  """Train/dev/test specs for a GLUE pair task with a header row."""
  return {
    "train": SplitSpec("train.tsv", text_a, text_b, label, True),
    "dev": SplitSpec("dev.tsv", text_a, text_b, label, True),
    "test": SplitSpec("test.tsv", test_a, test_b, None, True),
  }


def _mnli(suffix):
  return {
    "train": SplitSpec("train.tsv", 8, 9, -1, True, guid_column=0),
    "dev": SplitSpec("dev_%s.tsv" % suffix, 8, 9, -1, True, "dev_" + suffix, 0),
    "test": SplitSpec("test_%s.tsv" % suffix, 8, 9, None, True, "test", 0),
  }


_BINARY = ("0", "1")
_NLI3 = ("contradiction", "entailment", "neutral")
_NLI2 = ("entailment", "not_entailment")

_XNLI_EVAL = dict(keep_if=(0, "{language}"))

# The fake-news CSVs: the Chinese titles are the texts (the English ones are
# machine translations); test.csv has no label column.
_FAKENEWS_COLUMNS = (
  "id",
  "tid1",
  "tid2",
  "title1_zh",
  "title2_zh",
  "title1_en",
  "title2_en",
)


def _fakenews_split(file, labelled):
  return SplitSpec(
    file,
    3,
    4,
    7 if labelled else None,
    True,
    guid_column=0,
    header=_FAKENEWS_COLUMNS + (("label",) if labelled else ()),
  )


TASKS = {
  spec.name: spec
  for spec in (
    TaskSpec(
      "cola",
      _BINARY,
      {
        "train": SplitSpec("train.tsv", 3, None, 1, False),
        "dev": SplitSpec("dev.tsv", 3, None, 1, False),
        "test": SplitSpec("test.tsv", 1, None, None, True),
      },
    ),
    TaskSpec("sst-2", _BINARY, _glue_pair(0, None, 1, 1, None)),
    TaskSpec("mrpc", _BINARY, _glue_pair(3, 4, 0, 3, 4)),
    TaskSpec("sts-b", None, _glue_pair(7, 8, 9, 7, 8)),
    TaskSpec("qqp", _BINARY, _glue_pair(3, 4, 5, 1, 2)),
    TaskSpec("mnli", _NLI3, _mnli("matched")),
    TaskSpec("mnli-mm", _NLI3, _mnli("mismatched")),
    TaskSpec("qnli", _NLI2, _glue_pair(1, 2, 3, 1, 2)),
    TaskSpec("rte", _NLI2, _glue_pair(1, 2, 3, 1, 2)),
    TaskSpec("wnli", _BINARY, _glue_pair(1, 2, 3, 1, 2)),
    TaskSpec(
      "xnli",
      _NLI3,
      {
        "train": SplitSpec(
          "multinli/multinli.train.{language}.tsv",
          0,
          1,
          2,
          True,
          label_aliases={"contradictory": "contradiction"},
        ),
        "dev": SplitSpec("xnli.dev.tsv", 6, 7, 1, True, **_XNLI_EVAL),
        "test": SplitSpec("xnli.test.tsv", 6, 7, 1, True, **_XNLI_EVAL),
      },
    ),
    # No dev set is published: dev.csv is rows held out of train.csv.
    TaskSpec(
      "fakenews",
      ("agreed", "disagreed", "unrelated"),
      {
        "train": _fakenews_split("train.csv", True),
        "dev": _fakenews_split("dev.csv", True),
        "test": _fakenews_split("test.csv", False),
      },
      file_format="csv",
    ),
  )
}

_ALIASES = {
  "sst2": "sst-2",
  "stsb": "sts-b",
  "mnli-mismatched": "mnli-mm",
  "mnli_mm": "mnli-mm",
  "wsdm-fakenews": "fakenews",
  "fake-news": "fakenews",
}

TASK_NAMES = tuple(TASKS) + ("tsv",)


def tsv_task_spec(
  text_a_column=None,
  label_column=None,
  text_b_column=None,
  labels=None,
  regression=False,
  skip_header=False,
  multi_label=False,
  multi_label_separator=",",
):
  """Spec for a user's train/dev/test.tsv; test's label column is not read."""
  if text_a_column is None or label_column is None:
    raise InputError("--task_name=tsv needs --text_a_column and --label_column")
  if bool(labels) == bool(regression):
    raise InputError(
      "--task_name=tsv needs exactly one of --labels=a,b,... and --regression"
    )
  if multi_label and regression:
    raise InputError("--multi_label needs --labels, not --regression")
  if multi_label and not multi_label_separator:
    raise InputError("--multi_label_separator must not be empty")
  if multi_label and any(multi_label_separator in label for label in labels):
    raise InputError(
      "--labels=%s: a label contains the separator %r"
      % (",".join(labels), multi_label_separator)
    )
  if labels and len(set(labels)) != len(labels):
    raise InputError("--labels=%s: duplicate label" % ",".join(labels))
  splits = {
    name: SplitSpec(
      name + ".tsv",
      text_a_column,
      text_b_column,
      None if name == "test" else label_column,
      skip_header,
    )
    for name in ("train", "dev", "test")
  }
  return TaskSpec(
    "tsv",
    None if regression else tuple(labels),
    splits,
    multi_label_separator if multi_label else None,
  )


def get_task_spec(task_name, **tsv_options):
  """Returns the TaskSpec for a (case-insensitive) task name or alias."""
  name = (task_name or "").lower()
  name = _ALIASES.get(name, name)
  if name == "tsv":
    return tsv_task_spec(**tsv_options)
  if name not in TASKS:
    raise InputError(
      "--task_name=%s: unknown task; valid: %s"
      % (task_name, ", ".join(TASK_NAMES))
    )
  return TASKS[name]


def get_processor(task_name, data_dir, language="zh", **tsv_options):
  """Returns a ClassifierProcessor; `language` only matters for xnli."""
  return ClassifierProcessor(
    get_task_spec(task_name, **tsv_options), data_dir, language=language
  )
