"""Atomic outputs and one-line user errors, shared by every script.

Example:
    with atomic_output("out/predictions.json") as f:
      f.write(text)

`InputError` carries a message for the user; `run_cli` turns it (and other
expected failures) into a single `ERROR: ...` line and exit status 1.
"""

import contextlib
import os
import sys
import uuid


class InputError(ValueError):
  """Bad user input: a file, a flag or a record. The message is one line."""


def _temp_path(path):
  return "%s.tmp-%s" % (path, uuid.uuid4().hex[:8])


def _gfile():
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  return tf.io.gfile


def _is_remote(path):
  return "://" in path


@contextlib.contextmanager
def atomic_output(path, mode="w", encoding="utf-8"):
  """Yields a file object for a temp file renamed to `path` on success."""
  tmp = _temp_path(path)
  parent = os.path.dirname(path)
  if _is_remote(path):
    gfile = _gfile()
    try:
      with gfile.GFile(tmp, mode) as f:
        yield f
      gfile.rename(tmp, path, overwrite=True)
    except BaseException:
      if gfile.exists(tmp):
        gfile.remove(tmp)
      raise
    return
  if parent:
    os.makedirs(parent, exist_ok=True)
  kwargs = {} if "b" in mode else {"encoding": encoding}
  try:
    with open(tmp, mode, **kwargs) as f:
      yield f
    os.replace(tmp, path)
  except BaseException:
    if os.path.exists(tmp):
      os.remove(tmp)
    raise


def require_file(path, flag_name):
  """Raises InputError unless `path` names a readable file."""
  if not path:
    raise InputError("--%s is required" % flag_name)
  if not os.path.isfile(path) and not (_is_remote(path) and
                                       _gfile().exists(path)):
    raise InputError("--%s=%s: no such file" % (flag_name, path))


def run_cli(main):
  """Wraps an absl `main(argv)` so expected failures print one line.

  Use as `app.run(run_cli(main))`.
  """

  def wrapped(argv):
    try:
      return main(argv)
    except InputError as e:
      sys.stderr.write("ERROR: %s\n" % str(e).replace("\n", " "))
      sys.exit(1)
    except (FileNotFoundError, IsADirectoryError, PermissionError) as e:
      sys.stderr.write("ERROR: %s: %s\n" % (e.filename, e.strerror))
      sys.exit(1)

  return wrapped
