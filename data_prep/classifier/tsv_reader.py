"""Reads a task TSV the way the original processors do, with line numbers.

The original reads every file with `csv.reader(f, delimiter="\\t",
quotechar=None)`: quoting is off, so quote characters stay literal and every
physical line is one row. This reader does the same and additionally
  * drops a UTF-8 byte-order mark at the start of the file (MRPC has one; the
    original only got away with it because it skips MRPC's header row),
  * accepts a missing final newline (CoLA dev),
  * skips blank lines (the original would crash on them),
  * reports problems as a one-line `InputError` naming file and line.

`read_csv_rows` reads a quoted CSV file (Python's csv dialect "excel":
commas, double quotes, quoted newlines and commas, "" for a quote), as
Kaggle publishes its data, with the same checks; a malformed quote is an
error, not a silently merged row.

Example:
    for line_number, row in read_tsv_rows("glue/MRPC/train.tsv"):
      print(line_number, row[3])
"""

import csv
import os

from bert_tf.io_utils import InputError

_BOM = "\ufeff"


def _open_text(path):
  """Opens a local or remote (gs://...) file for csv reading."""
  if "://" in path:
    import tensorflow as tf  # pylint: disable=g-import-not-at-top

    if not tf.io.gfile.exists(path):
      raise InputError("%s: no such file" % path)
    return tf.io.gfile.GFile(path, "r")
  if not os.path.isfile(path):
    raise InputError("%s: no such file" % path)
  return open(path, "r", encoding="utf-8", newline="")


def read_tsv_rows(path):
  """Yields (1-based line number, list of fields) for each non-blank line.

  Raises:
    InputError: the file is missing, empty, not UTF-8 or has a malformed line.
  """
  return _read_rows(path, delimiter="\t", quotechar=None)


def read_csv_rows(path):
  """As `read_tsv_rows` for a quoted CSV file; the line number is the one
  a row ends on (a quoted field may span lines)."""
  return _read_rows(path, strict=True)


def _read_rows(path, **dialect):
  empty = True
  with _open_text(path) as f:
    try:
      # Dropped before parsing: a BOM before a quoted field would unquote it.
      if f.read(1) != _BOM:
        f.seek(0)
      reader = csv.reader(f, **dialect)
      for row in reader:
        empty = False
        if any("\x00" in field for field in row):
          raise InputError(
            "%s:%d: a NUL byte (UTF-16 or binary data?)"
            % (path, reader.line_num)
          )
        if row:
          yield reader.line_num, row
    except csv.Error as e:
      raise InputError("%s:%d: %s" % (path, reader.line_num, e)) from e
    except UnicodeDecodeError as e:
      raise InputError("%s: not UTF-8 text (%s)" % (path, e.reason)) from e
  if empty:
    raise InputError("%s: empty file" % path)
