"""Turns a task's TSV (or CSV) files into InputExamples, driven by a
TaskSpec.

Replaces the original's DataProcessor subclasses with one reader: the spec
(data_prep/classifier/tasks.py) says which file and columns each split uses.

Example:
    processor = classifier_tasks.get_processor("cola", "glue/CoLA")
    train = processor.get_examples("train")   # list of InputExample
    processor.get_labels()                    # ["0", "1"]
    processor.is_regression                   # False
"""

import math
import os

from bert_tf.io_utils import InputError
from bert_tf.tokenizers import tokenization
from data_prep.classifier.example import InputExample
from data_prep.classifier.tsv_reader import read_csv_rows
from data_prep.classifier.tsv_reader import read_tsv_rows

_FLOAT32_MAX = 3.4028234663852886e38

SPLITS = ("train", "dev", "test")


def _columns_needed(*columns):
  """Smallest row length that has every (possibly negative) column."""
  return max(c + 1 if c >= 0 else -c for c in columns if c is not None)


class ClassifierProcessor:
  """Reads the train/dev/test examples of one task.

  Args:
    spec: a `classifier_tasks.TaskSpec`.
    data_dir: directory holding the task's files.
    language: XNLI language ("{language}" in file names and filters).
  """

  def __init__(self, spec, data_dir, language="zh"):
    self.spec = spec
    self.data_dir = data_dir
    self.language = language

  @property
  def name(self):
    return self.spec.name

  @property
  def is_regression(self):
    return self.spec.labels is None

  @property
  def is_multi_label(self):
    return self.spec.multi_label_separator is not None

  def get_labels(self):
    """Label strings in id order, or None for a regression task."""
    return None if self.is_regression else list(self.spec.labels)

  def split_file(self, split):
    """Path of the file `split` reads."""
    return os.path.join(
      self.data_dir, self._split_spec(split).file.format(language=self.language)
    )

  def get_examples(self, split, input_file=None):
    """All examples of `split` ("train", "dev" or "test"), in file order.

    Args:
      split: which layout (and, unless `input_file` is given, which file).
      input_file: read this file instead of the split's usual one.

    Raises:
      InputError: missing/empty file, unexpected header, short row, unknown
        or non-numeric label.
    """
    split_spec = self._split_spec(split)
    path = input_file or self.split_file(split)
    read_rows = read_csv_rows if self._is_csv else read_tsv_rows
    examples = []
    for line_number, row in read_rows(path):
      if split_spec.skip_header and line_number == 1:
        self._check_header(split_spec.header, path, row)
        continue
      example = self._make_example(split, split_spec, path, line_number, row)
      if example is not None:
        examples.append(example)
    if not examples:
      raise InputError("%s: no examples" % path)
    return examples

  @property
  def _is_csv(self):
    return self.spec.file_format == "csv"

  def _check_header(self, header, path, row):
    if header and tuple(row[: len(header)]) != header:
      raise InputError(
        "%s:1: the columns must start with %s, found %s"
        % (path, ",".join(header), ",".join(row))
      )

  def _split_spec(self, split):
    if split not in SPLITS:
      raise InputError(
        "--split=%s: must be one of %s" % (split, ", ".join(SPLITS))
      )
    return self.spec.splits[split]

  def _make_example(self, split, s, path, line_number, row):
    """One InputExample from a row, or None when `keep_if` rejects it."""
    keep_column, keep_value = s.keep_if or (None, None)
    needed = _columns_needed(
      s.text_a, s.text_b, s.label, s.guid_column, keep_column
    )
    if len(row) < needed:
      raise InputError(
        "%s:%d: expected at least %d %s-separated columns, found %d"
        % (
          path,
          line_number,
          needed,
          "comma" if self._is_csv else "tab",
          len(row),
        )
      )
    if keep_column is not None and row[keep_column] != keep_value.format(
      language=self.language
    ):
      return None
    index = line_number - 1 if s.guid_column is None else row[s.guid_column]
    text_b = None if s.text_b is None else row[s.text_b]
    return InputExample(
      guid="%s-%s" % (s.guid_prefix or split, index),
      text_a=tokenization.convert_to_unicode(row[s.text_a]),
      text_b=tokenization.convert_to_unicode(text_b) if text_b else text_b,
      label=self._label(s, row, path, line_number),
    )

  def _label(self, s, row, path, line_number):
    """The row's validated label (float for regression, a tuple of labels in
    label order for multi-label) or the dummy."""
    if s.label is None:
      if self.is_multi_label:
        return ()
      return 0.0 if self.is_regression else self.spec.labels[0]
    label = row[s.label]
    if self.is_multi_label:
      return self._label_set(label, path, line_number)
    if self.is_regression:
      try:
        value = float(label)
      except ValueError:
        value = math.nan
      # A NaN label trains a NaN model; the records hold float32.
      if not math.isfinite(value) or abs(value) > _FLOAT32_MAX:
        raise InputError(
          "%s:%d: label %r is not a finite float32 number"
          % (path, line_number, label)
        )
      return value
    label = (s.label_aliases or {}).get(label, label)
    self._check_label(label, path, line_number)
    return label

  def _label_set(self, cell, path, line_number):
    labels = {
      label.strip() for label in cell.split(self.spec.multi_label_separator)
    }
    labels.discard("")
    for label in sorted(labels):
      self._check_label(label, path, line_number)
    return tuple(label for label in self.spec.labels if label in labels)

  def _check_label(self, label, path, line_number):
    if label not in self.spec.labels:
      raise InputError(
        "%s:%d: unknown label %r (labels: %s)"
        % (path, line_number, label, ", ".join(self.spec.labels))
      )
