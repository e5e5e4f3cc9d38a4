"""Atomic outputs and one-line user errors, shared by every script.

Example:
    with atomic_output("out/predictions.json") as f:
      f.write(text)

`InputError` carries a message for the user; `run_cli` turns it (and every
OS, TensorFlow or safetensors failure) into a single `ERROR: ...` line and
exit status 1. `decode_text` reads text inputs strictly as UTF-8.
"""

import contextlib
import fnmatch
import glob
import os
import re
import sys
import tempfile
import uuid


class InputError(ValueError):
  """Bad user input: a file, a flag or a record. The message is one line."""


def _temp_path(path):
  return "%s.tmp-%s" % (path, uuid.uuid4().hex[:8])


def leftover_temps(path):
  """The temp files of `atomic_output(path)` whose writers were killed
  before they could remove them (local paths; none for a remote one)."""
  if is_remote(path):
    return []
  return glob.glob(glob.escape(path) + ".tmp-" + "[0-9a-f]" * 8)


def gfile():
  """`tf.io.gfile`, imported on first use: local paths never load
  TensorFlow (the data_prep jobs stay TensorFlow-free)."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top

  return tf.io.gfile


def is_remote(path):
  """True for a URL-like path (gs://, hdfs://, ...) that needs `gfile()`."""
  return "://" in path


@contextlib.contextmanager
def atomic_output(path, mode="w", encoding="utf-8"):
  """Yields a file object for a temp file renamed to `path` on success."""
  tmp = _temp_path(path)
  parent = os.path.dirname(path)
  if is_remote(path):
    fs = gfile()
    try:
      with fs.GFile(tmp, mode) as f:
        yield f
      fs.rename(tmp, path, overwrite=True)
    except BaseException:
      if fs.exists(tmp):
        fs.remove(tmp)
      raise
    return
  if parent:
    os.makedirs(parent, exist_ok=True)
  kwargs = {} if "b" in mode else {"encoding": encoding}
  try:
    with open(tmp, mode, **kwargs) as f:
      yield f
    if _staged is not None and os.path.abspath(path) in _staged[0]:
      _staged[1][os.path.abspath(path)] = tmp  # published by output_set
    else:
      os.replace(tmp, path)
  except BaseException as e:
    if os.path.exists(tmp):
      os.remove(tmp)
    if isinstance(e, OSError) and e.filename is None:
      # A failed write or close (disk full) names no file: name the output.
      raise OSError(e.errno, e.strerror, path) from e
    raise


def umask():
  """The process's umask (Linux: read, not set; elsewhere set and reset)."""
  try:
    with open("/proc/self/status", encoding="ascii") as f:
      for line in f:
        if line.startswith("Umask:"):
          return int(line.split()[1], 8)
  except OSError:
    pass
  mask = os.umask(0o022)
  os.umask(mask)
  return mask


def follow_umask(path):
  """Gives `path` -- a file, or a folder and all it holds -- the mode a new
  file or folder gets under the umask. Some writers make private files
  (tempfile.mkdtemp: 0700, safetensors: 0600), which a serving process of
  another user could not read once they are renamed into place."""
  mask = umask()
  os.chmod(path, (0o777 if os.path.isdir(path) else 0o666) & ~mask)
  for root, dirs, files in os.walk(path):
    for name in dirs:
      os.chmod(os.path.join(root, name), 0o777 & ~mask)
    for name in files:
      os.chmod(os.path.join(root, name), 0o666 & ~mask)


def make_temp_dir(parent, prefix):
  """A new uniquely named folder in `parent` (created if needed) for an
  output built before it is renamed into place, with the umask's mode (not
  mkdtemp's 0700)."""
  os.makedirs(parent, exist_ok=True)
  path = tempfile.mkdtemp(prefix=prefix, dir=parent)
  follow_umask(path)
  return path


def publish_dir(tmp_dir, folder, owned=(), last=()):
  """Moves the files of `tmp_dir` into `folder` as one set.

  The files of `folder` matching a glob of `owned` (what an earlier set of
  this kind holds) that the new set lacks are removed first: a folder never
  shows an earlier run's vocab.txt beside a new model. Files get the
  umask's modes; names in `last` (a state file readers look for) move last.
  """
  names = sorted(os.listdir(tmp_dir), key=lambda n: (n in last, n))
  os.makedirs(folder, exist_ok=True)
  for name in os.listdir(folder):
    if name not in names and any(
      fnmatch.fnmatchcase(name, pattern) for pattern in owned
    ):
      os.remove(os.path.join(folder, name))
  for name in names:
    follow_umask(os.path.join(tmp_dir, name))
    os.replace(os.path.join(tmp_dir, name), os.path.join(folder, name))


def require_file(path, flag_name):
  """Raises InputError unless `path` names a readable file."""
  if not path:
    raise InputError("--%s is required" % flag_name)
  if not os.path.isfile(path) and not (
    is_remote(path) and gfile().exists(path)
  ):
    raise InputError("--%s=%s: no such file" % (flag_name, path))


def decode_text(raw, path, start_line=1):
  """`raw` bytes of `path` as str; InputError naming `path:line` unless they
  are UTF-8 text (bad bytes, or NUL bytes: UTF-16/32 or binary data)."""
  position = raw.find(b"\x00")
  problem = "a NUL byte (UTF-16 or binary data?)"
  try:
    text = raw.decode("utf-8")
  except UnicodeDecodeError as e:
    if position < 0 or e.start < position:
      position, problem = e.start, "not UTF-8 (%s)" % e.reason
  if position >= 0:
    raise InputError(
      "%s:%d: %s" % (path, start_line + raw.count(b"\n", 0, position), problem)
    )
  return text


def user_path(path):
  """`path` without the temporary suffix of `atomic_output` (or of a
  shard, `.tmp-shard`)."""
  return re.sub(r"\.tmp-([0-9a-f]{8}|shard)", "", str(path))


def _is_library_error(e, package):
  return type(e).__module__.split(".")[0].lstrip("_") == package


def first_line(text):
  """The first line of a (TF) message, without its function/op
  decorations; for a "Graph execution error:" the line giving its cause
  (after the Python frames of the graph's definition)."""
  lines = [l for l in str(text).splitlines() if l.strip()]
  if lines and lines[0].strip() == "Graph execution error:":
    lines = [
      l
      for l in lines[1:]
      if not l[0].isspace() and not l.startswith("Detected at node")
    ] or lines
  line = lines[0] if lines else ""
  line = re.sub(r"^\{\{function_node [^}]*\}\}\s*", "", line)
  return re.sub(r"\s*\[Op:[^\]]*\].*$", "", line).strip()


def error_line(e):
  """The one line `run_cli` prints for `e`, or None if `e` is a bug."""
  if isinstance(e, InputError):
    return str(e).replace("\n", " ")
  if isinstance(e, OSError) and not _is_library_error(e, "tensorflow"):
    if e.filename is None:
      return first_line(e)
    return "%s: %s" % (user_path(e.filename), e.strerror or first_line(e))
  if _is_library_error(e, "tensorflow") and hasattr(e, "error_code"):
    # tf.errors.*: DataLossError names the damaged checkpoint shard, ...
    return "%s: %s" % (type(e).__name__, first_line(user_path(e.message)))
  if _is_library_error(e, "safetensors"):
    return "safetensors: %s" % first_line(e)
  return None


def run_cli(main):
  """Wraps an absl `main(argv)` so expected failures print one line.

  Scripts use it through `bert_tf.runtime.app.run_app`. Other exceptions
  are bugs and keep their traceback.
  """

  def wrapped(argv):
    try:
      return main(argv)
    except Exception as e:  # pylint: disable=broad-except
      line = error_line(e)
      if line is None:
        raise
      sys.stderr.write("ERROR: %s\n" % line)
      sys.exit(1)

  return wrapped


LOCK_FILE = ".bert_tf.lock"
# realpath -> open lock file: a lock lives as long as the process (which
# may run several mains on one folder, e.g. train, then predict).
_held_locks = {}


def make_output_dir(path):
  """Creates `path` and takes an exclusive lock on it for this process.

  Two runs on one output_dir would restore each other's checkpoints and mix
  their outputs; the second fails at once, naming the holder. The lock
  (flock on `LOCK_FILE`) dies with its process, kill -9 included. Remote
  paths (gs://...) are only created: they have no such lock.
  """
  if is_remote(path):
    gfile().makedirs(path)
    return
  os.makedirs(path, exist_ok=True)
  if os.path.realpath(path) in _held_locks:
    return
  import fcntl  # pylint: disable=g-import-not-at-top
  import socket  # pylint: disable=g-import-not-at-top

  lock_path = os.path.join(path, LOCK_FILE)
  f = open(lock_path, "a+", encoding="utf-8")  # pylint: disable=consider-using-with
  try:
    fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
  except BlockingIOError:
    f.seek(0)
    holder = f.read().strip() or "another process"
    f.close()
    raise InputError(
      "--output_dir=%s is in use by %s; wait for it to end "
      "or use another --output_dir" % (path, holder)
    ) from None
  f.seek(0)
  f.truncate()
  f.write("pid %d on %s\n" % (os.getpid(), socket.gethostname()))
  f.flush()
  _held_locks[os.path.realpath(path)] = f
  _remove_stale_temps(path)


def release_output_dir(path):
  """Releases this process's lock of `path` (taken by `make_output_dir`)."""
  lock = _held_locks.pop(os.path.realpath(path), None)
  if lock is not None:
    lock.close()


# While an `output_set` is open: (its final paths, {final path: temp path}).
_staged = None


@contextlib.contextmanager
def output_set(folder, names):
  """Publishes the files `names` of `folder` as one set.

  Inside the block, `atomic_output` to one of them writes a temp file but
  does not rename it. When the block ends without an exception, the set's
  earlier files (also those this run did not write again, which would
  describe other results) are removed and the new ones renamed in; after an
  exception the new files are dropped and the earlier set stays as it was.
  Either way the folder never holds a mix of two runs' files.

  Example:
      with output_set(out, ["predictions.json", "eval_results.json"]):
        write_predictions(...)  # atomic_output(out/predictions.json)
        write_metrics(...)
  """
  global _staged
  finals = {os.path.abspath(os.path.join(folder, name)) for name in names}
  staged = {}
  _staged = (finals, staged)
  try:
    yield
  except BaseException:
    for tmp in staged.values():
      if os.path.exists(tmp):
        os.remove(tmp)
    raise
  finally:
    _staged = None
  for path in finals - staged.keys():
    if os.path.exists(path):
      os.remove(path)
  for path, tmp in staged.items():
    os.replace(tmp, path)


def _remove_stale_temps(folder):
  """Temp files of killed runs (`atomic_output`'s `.tmp-xxxxxxxx`, a
  sharded output's `.tmp-shard`) and half-saved checkpoints (`*_temp`
  folders): only called under the folder's lock, so none is a live run's."""
  import re  # pylint: disable=g-import-not-at-top
  import shutil  # pylint: disable=g-import-not-at-top

  pattern = re.compile(r".*(\.tmp-[0-9a-f]{8}|\.tmp-shard|_temp)$")
  for name in os.listdir(folder):
    if pattern.match(name) and name != LOCK_FILE:
      path = os.path.join(folder, name)
      if os.path.isdir(path):
        shutil.rmtree(path, ignore_errors=True)
      else:
        os.remove(path)
