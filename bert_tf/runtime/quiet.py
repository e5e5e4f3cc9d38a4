"""A quiet console: TensorFlow's start-up lines off unless asked for.

Importing TensorFlow 2.21 printed six lines (twice: two shared libraries
each carry their own absl logging) before any of our output — absl's
"messages before InitializeLog" warning, the oneDNN notice, "could not find
cuda drivers" — and the first device listing an E-level "failed call to
cuInit" on a machine without a GPU driver. They are logged while the
libraries load, before TensorFlow reads `TF_CPP_MIN_LOG_LEVEL`, so the
variable cannot silence them; only the process's stderr can. So
`quiet_tensorflow()` (the first thing `app.run_app` does) imports
TensorFlow, when it is imported, with file descriptor 2 sent to a
temporary file, and then writes back every line of it except those below
`TF_CPP_MIN_LOG_LEVEL` (2 unless set) and the cuInit failure that follows
a missing driver. Anything else (a Python warning, a real error) is kept.

`TF_CPP_MIN_LOG_LEVEL` is honoured for those early lines too (a user's
0 shows them all); nothing is filtered when the user sets
`TF_CPP_MAX_VLOG_LEVEL` or `TF_CPP_VMODULE`, or passes `--verbosity` >= 1
(`-v`), which also keeps TensorFlow's Python INFO lines (otherwise raised
to WARNING). TensorFlow-free: it must run before the import.

Example:
    quiet.quiet_tensorflow()   # before anything imports tensorflow
    import tensorflow as tf    # prints nothing on a CPU machine
"""

import contextlib
import importlib.abc
import importlib.util
import logging
import os
import re
import sys
import threading

from absl import logging as absl_logging

_DEBUG_SETTINGS = ("TF_CPP_MAX_VLOG_LEVEL", "TF_CPP_VMODULE")
_DEFAULT_MIN_LEVEL = "2"  # Errors only, as the scripts always set.
# An absl (C++) log line: severity letter, date, time, thread, file:line].
_ABSL_LINE = re.compile(r"^([IWEF])\d{4} [\d:.]+\s+\d+ [^\]]+\] ")
_SEVERITIES = "IWEF"
_PRE_INIT = "All log messages before absl::InitializeLog() is called"
_NO_DRIVER = "Could not find cuda drivers on your machine"
_CUINIT = "failed call to cuInit"
_CONTINUED = "To enable the following instructions"  # cpu_feature_guard's
# Beam's GCP clients are not installed: harmless, said by every process.
_BEAM_NOISE = (
  "apitools not found",
  "No semi_persistent_directory found",
  "bigquery_storage_v1",
)
_VERBOSITY = re.compile(r"^--?(verbosity|v)=?(-?\d+)?$")
_quiet = False  # Whether quiet_tensorflow() turned the filters on.


def _verbose(argv):
  """Whether argv asks for absl --verbosity >= 1 (`-v 1`, `--verbosity=2`)."""
  for i, arg in enumerate(argv):
    match = _VERBOSITY.match(arg)
    if match:
      value = match.group(2)
      if value is None and i + 1 < len(argv):
        value = argv[i + 1]
      try:
        return int(value) >= 1
      except (TypeError, ValueError):
        return False
  return False


class StartupFilter:
  """`keep(line)` for TensorFlow's start-up output, line by line: absl log
  records below `min_level` (0..3, I..F) with their known continuation
  line, absl's pre-init notice once anything is hidden, and the cuInit
  failure after "could not find cuda drivers" go. Any other line stays."""

  def __init__(self, min_level):
    self.min_level = min_level
    self._no_driver = False
    self._dropped = False  # The last absl record.

  def __call__(self, line):
    match = _ABSL_LINE.match(line)
    if match:
      self._no_driver = self._no_driver or _NO_DRIVER in line
      level = _SEVERITIES.index(match.group(1))
      self._dropped = level < self.min_level or (
        self.min_level > 0 and self._no_driver and _CUINIT in line
      )
      return not self._dropped
    if line.startswith(_CONTINUED):
      return not self._dropped
    return not (_PRE_INIT in line and self.min_level > 0)


def beam_worker_line(line):
  """`keep(line)` for Beam's local SDK workers (their own stderr, Python's
  default format): their INFO and the GCP-client notices go."""
  return not (
    line.startswith("INFO:") or any(noise in line for noise in _BEAM_NOISE)
  )


@contextlib.contextmanager
def filtered_stderr(keep):
  """File descriptor 2 (this process's and its children's) through
  `keep(line)`, live, for the duration; a no-op without a stderr."""
  try:
    saved = os.dup(2)
  except OSError:
    yield
    return
  read_end, write_end = os.pipe()

  def forward():
    with os.fdopen(read_end, "rb") as lines, os.fdopen(saved, "wb") as out:
      for line in lines:
        if keep(line.decode("utf-8", errors="replace")):
          out.write(line)
          out.flush()

  # A daemon: children that outlive the block keep the pipe open.
  thread = threading.Thread(target=forward, daemon=True)
  thread.start()
  sys.stderr.flush()
  os.dup2(write_end, 2)
  os.close(write_end)
  try:
    yield
  finally:
    sys.stderr.flush()
    os.dup2(saved, 2)  # Closes our last copy of the pipe's write end.
    thread.join(timeout=5)  # The rest of the lines, in order.


class _QuietLoader(importlib.abc.Loader):
  """TensorFlow's own loader, run with stderr filtered."""

  def __init__(self, loader, min_level):
    self._loader = loader
    self._min_level = min_level

  def __getattr__(self, name):  # Resource readers etc.: TensorFlow's.
    return getattr(self._loader, name)

  def create_module(self, spec):
    return self._loader.create_module(spec)

  def exec_module(self, module):
    with filtered_stderr(StartupFilter(self._min_level)):
      self._loader.exec_module(module)
      # Devices are listed at the first op anyway; listing them now keeps
      # the cuInit failure of a driver-less machine inside the filter.
      # (Physical devices only: visibility and threads stay settable.)
      module.config.list_physical_devices()


class _QuietFinder(importlib.abc.MetaPathFinder):
  """Finds `tensorflow` once, with its loader wrapped in `_QuietLoader`."""

  def __init__(self, min_level):
    self._min_level = min_level

  def find_spec(self, name, path=None, target=None):
    del path, target
    if name != "tensorflow":
      return None
    sys.meta_path.remove(self)
    spec = importlib.util.find_spec(name)
    if spec is not None and spec.loader is not None:
      spec.loader = _QuietLoader(spec.loader, self._min_level)
    return spec


class _LibraryInfoFilter(logging.Filter):
  """Drops the records below WARNING that TensorFlow's, Keras's or Beam's
  own modules log through absl, and Beam's GCP-client notices."""

  def __init__(self):
    super().__init__()
    folders = []
    for package in ("tensorflow", "keras", "tf_keras", "apache_beam"):
      try:
        spec = importlib.util.find_spec(package)  # Does not import it.
      except (ImportError, ValueError):
        spec = None
      if spec is not None:
        folders.extend(spec.submodule_search_locations or ())
    self._prefixes = tuple(os.path.join(f, "") for f in folders)

  def filter(self, record):
    if not (self._prefixes and record.pathname.startswith(self._prefixes)):
      return True
    return record.levelno >= logging.WARNING and not any(
      noise in record.getMessage() for noise in _BEAM_NOISE
    )


def quiet_tensorflow(argv=None):
  """Silences TensorFlow's start-up lines for this process (idempotent).

  Args:
    argv: the command line (default `sys.argv`), read only for
      `--verbosity`.
  """
  argv = sys.argv if argv is None else argv
  if _verbose(argv) or any(name in os.environ for name in _DEBUG_SETTINGS):
    return
  level = os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", _DEFAULT_MIN_LEVEL)
  try:
    min_level = int(level)
  except ValueError:  # TensorFlow's business, not ours.
    return
  if min_level < 1:
    return
  global _quiet
  _quiet = True
  # Their Python INFO lines, e.g. "Sharding callback duration" at every
  # checkpoint save, whether logged through absl or the std logging.
  logging.getLogger("tensorflow").setLevel(logging.WARNING)
  handler = absl_logging.get_absl_handler()  # Every record passes it.
  if not any(isinstance(f, _LibraryInfoFilter) for f in handler.filters):
    handler.addFilter(_LibraryInfoFilter())
  if "tensorflow" not in sys.modules and not any(
    isinstance(finder, _QuietFinder) for finder in sys.meta_path
  ):
    sys.meta_path.insert(0, _QuietFinder(min_level))


def quiet_beam_workers():
  """A context in which the local Beam SDK workers' INFO lines (~40 a job)
  and, should a worker import TensorFlow, its start-up lines are dropped
  (when `quiet_tensorflow()` is on)."""
  if not _quiet:
    return contextlib.nullcontext()
  startup = StartupFilter(int(os.environ["TF_CPP_MIN_LOG_LEVEL"]))
  return filtered_stderr(lambda line: beam_worker_line(line) and startup(line))
