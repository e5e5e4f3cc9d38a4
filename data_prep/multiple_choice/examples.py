"""Multiple-choice examples from SWAG CSV files or generic JSON lines.

SWAG (rowanz/swagaf `data/{train,val,test}.csv`) is read as published, with
the csv module. The header row names the columns,
    [unnamed index,] video-id, fold-ind, startphrase, sent1, sent2,
    gold-source, ending0, ..., ending3[, label]
and columns are found by name, so the index column may be there or not and
test.csv needs no `label`. Every row must have as many fields as the header.

The generic format is JSON lines, one example per line:
    {"id": "q1", "context": "He opens the door.", "prefix": "He",
     "endings": ["walks in.", "sings.", "eats the door."], "label": 0}
`id` and `prefix` are optional, `label` is optional in test files; any
number of endings >= 2, the same within a file.

Unlabeled (test) examples get label 0, like the original's GLUE test sets.

Example:
    path = split_file("data/swag", "dev")    # data/swag/val.csv
    examples = read_examples(path, "dev")
    examples[0].endings                      # ["...", "...", "...", "..."]
"""

import collections
import csv
import json
import os
import re

from bert_tf.io_utils import InputError

# context: first segment (SWAG sent1); prefix: the start of the second
# segment each ending continues (SWAG sent2, may be empty).
MultipleChoiceExample = collections.namedtuple(
  "MultipleChoiceExample", "guid context prefix endings label"
)

# split -> the file names it may have in data_dir (exactly one must exist).
SPLIT_FILES = {
  "train": ("train.csv", "train.jsonl"),
  "dev": ("val.csv", "val.jsonl", "dev.jsonl"),
  "test": ("test.csv", "test.jsonl"),
}

_BOM = "\ufeff"
_ENDING = re.compile(r"ending(\d+)$")
_INTEGER = re.compile(r"\s*-?\d+\s*$")


def split_file(data_dir, split):
  """The one file of `split` ("train", "dev", "test") in data_dir."""
  names = SPLIT_FILES[split]
  found = [n for n in names if os.path.isfile(os.path.join(data_dir, n))]
  if not found:
    raise InputError(
      "--data_dir=%s: no %s file (%s)" % (data_dir, split, " or ".join(names))
    )
  if len(found) > 1:
    raise InputError(
      "--data_dir=%s: both %s for the %s split; keep one"
      % (data_dir, " and ".join(found), split)
    )
  return os.path.join(data_dir, found[0])


def read_examples(path, split):
  """All examples of a SWAG .csv or generic .jsonl file, in file order.

  Raises:
    InputError: missing/empty/non-UTF-8 file, wrong column count, missing
      field, label out of range, unequal numbers of endings.
  """
  if not os.path.isfile(path):
    raise InputError("%s: no such file" % path)
  reader = _read_jsonl if path.endswith(".jsonl") else _read_swag_csv
  try:
    with open(path, "r", encoding="utf-8", newline="") as f:
      examples = reader(f, path, split)
  except UnicodeDecodeError as e:
    raise InputError("%s: not UTF-8 text (%s)" % (path, e.reason)) from e
  if not examples:
    raise InputError("%s: no examples" % path)
  return examples


def _label(value, num_choices, where):
  """The choice index `value` (int or decimal string), range-checked."""
  if isinstance(value, str) and _INTEGER.match(value):
    value = int(value)
  if not isinstance(value, int) or isinstance(value, bool):
    raise InputError("%s: label %r is not a choice index" % (where, value))
  if not 0 <= value < num_choices:
    raise InputError(
      "%s: label %d out of range for %d choices (0-%d)"
      % (where, value, num_choices, num_choices - 1)
    )
  return value


def _swag_columns(header, path, split):
  """(sent1, sent2, [ending columns], label column or None) by name."""
  columns = {name: i for i, name in enumerate(header)}
  endings = sorted(
    (int(m.group(1)), i) for i, m in enumerate(map(_ENDING.match, header)) if m
  )
  required = ["sent1", "sent2"] + ([] if split == "test" else ["label"])
  missing = [name for name in required if name not in columns]
  if [k for k, _ in endings] != list(range(max(len(endings), 2))):
    missing.append("ending0..endingN (N >= 1)")
  if missing:
    raise InputError(
      "%s:1: header lacks %s (header: %s)"
      % (path, ", ".join(missing), ",".join(header))
    )
  return (
    columns["sent1"],
    columns["sent2"],
    [i for _, i in endings],
    columns.get("label"),
  )


def _read_swag_csv(f, path, split):
  reader = csv.reader(f)
  try:
    header = next(reader, None)
    if not header:
      raise InputError("%s: empty file" % path)
    header[0] = header[0].lstrip(_BOM)
    sent1, sent2, endings, label = _swag_columns(header, path, split)
    examples = []
    for row in reader:
      if not row:
        continue
      where = "%s:%d" % (path, reader.line_num)
      if len(row) != len(header):
        raise InputError(
          "%s: expected %d comma-separated columns (as the "
          "header), found %d" % (where, len(header), len(row))
        )
      examples.append(
        MultipleChoiceExample(
          "%s-%d" % (split, len(examples)),
          row[sent1],
          row[sent2],
          [row[i] for i in endings],
          0 if label is None else _label(row[label], len(endings), where),
        )
      )
  except csv.Error as e:
    raise InputError("%s:%d: %s" % (path, reader.line_num, e)) from e
  return examples


def _text(record, key, where, default=None):
  value = record.get(key, default)
  if not isinstance(value, str):
    raise InputError(
      "%s: %r must be a string" % (where, key)
      if key in record
      else "%s: missing %r" % (where, key)
    )
  return value


def _read_jsonl(f, path, split):
  examples, first = [], None
  for line_number, line in enumerate(f, 1):
    if not line.strip():
      continue
    where = "%s:%d" % (path, line_number)
    try:
      record = json.loads(line)
    except json.JSONDecodeError as e:
      raise InputError("%s: not valid JSON (%s)" % (where, e.msg)) from e
    if not isinstance(record, dict):
      raise InputError("%s: expected a JSON object" % where)
    endings = record.get("endings")
    if (
      not isinstance(endings, list)
      or len(endings) < 2
      or not all(isinstance(e, str) for e in endings)
    ):
      raise InputError(
        "%s: \"endings\" must be a list of at least 2 strings" % where
      )
    first = first or (line_number, len(endings))
    if len(endings) != first[1]:
      raise InputError(
        "%s: %d endings, but line %d has %d (every example of "
        "a file needs the same number of choices)"
        % ((where, len(endings)) + first)
      )
    if "label" in record:
      label = _label(record["label"], len(endings), where)
    elif split == "test":
      label = 0
    else:
      raise InputError("%s: missing 'label'" % where)
    examples.append(
      MultipleChoiceExample(
        str(record.get("id", "%s-%d" % (split, len(examples)))),
        _text(record, "context", where),
        _text(record, "prefix", where, ""),
        endings,
        label,
      )
    )
  return examples
