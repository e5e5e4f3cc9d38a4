"""A run folder's own files, and the entries --overwrite_output_dir removes.

A run folder carries the tokenizer file and `bert_config.json` of its model
(as a HuggingFace `save_pretrained` folder carries its tokenizer), and
run_config.json names them relative to the folder, so a run folder moved or
copied anywhere exports, predicts and resumes with the same files. Names
followed from run_config.json resolve inside the folder (no `..`, no
symlink leaving it). A run folder recorded with absolute paths (before its
files were its own) still reads: the folder's own copy when it has one, else
the recorded file.

Example:
    place(folder, "vocab_file", "/models/vocab.txt")   # -> "vocab.txt"
    path = resolve(folder, "vocab.txt", "vocab_file", "run/run_config.json")
    remove(folder, ["ckpt-1.index", "best"])
"""

import glob
import json
import os
import shutil

from bert_tf.io_utils import atomic_output
from bert_tf.io_utils import gfile
from bert_tf.io_utils import InputError
from bert_tf.io_utils import is_remote
from bert_tf.io_utils import LOCK_FILE

# The name of each own file in a run folder (HuggingFace's names).
OWN_NAMES = {
  "vocab_file": "vocab.txt",
  "spm_model_file": "spiece.model",
  "bert_config_file": "bert_config.json",
}


def _exists(path):
  return gfile().exists(path) if is_remote(path) else os.path.exists(path)


def _read_bytes(path):
  try:
    if is_remote(path):
      with gfile().GFile(path, "rb") as f:
        return f.read()
    with open(path, "rb") as f:
      return f.read()
  except OSError as e:
    raise InputError("%s: cannot read (%s)" % (path, e.strerror or e)) from e


def _same_file(a, b):
  if is_remote(a) or is_remote(b):
    return a == b
  try:
    return os.path.samefile(a, b)
  except OSError:
    return False


def entries(folder):
  """The sorted names in `folder` but its lock."""
  if is_remote(folder):
    names = [n.rstrip("/") for n in gfile().listdir(folder)]
  else:
    names = os.listdir(folder)
  return sorted(n for n in names if n != LOCK_FILE)


def is_within(path, folder):
  """Whether local `path` (links followed) is `folder` or inside it."""
  path, folder = os.path.realpath(path), os.path.realpath(folder)
  return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def place(folder, key, source=None, content=None):
  """Puts the run's own `key` file (OWN_NAMES) into `folder`: `content`
  (bytes), else a copy of `source`; nothing when `source` is that file
  already. -> its name.

  Raises:
    InputError: the folder holds another file of that name (a file the
      user put there is never replaced).
  """
  name = OWN_NAMES[key]
  dest = os.path.join(folder, name)
  if source and _same_file(source, dest):  # the input lives in the folder
    return name
  data = _read_bytes(source) if content is None else content
  if _exists(dest):
    held = _read_bytes(dest)
    if held == data or (key == "bert_config_file" and _same_config(held, data)):
      return name
    raise InputError(
      "--output_dir=%s holds a %s that is not the run's %s: move it away, "
      "or use another --output_dir"
      % (folder, name, "--%s=%s" % (key, source) if source else "model config")
    )
  with atomic_output(dest, "wb") as f:
    f.write(data)
  return name


def _same_config(held, data):
  """Whether config file bytes `held` describe model config `data` (its
  values; keys it leaves out take their defaults in `data`)."""
  try:
    held, data = json.loads(held), json.loads(data)
  except (ValueError, RecursionError):
    return False
  return isinstance(held, dict) and all(
    key in data and data[key] == value for key, value in held.items()
  )


def resolve(folder, recorded, key, where):
  """The path of the file run_config.json (`where`) names as `key`.

  A relative name is the folder's own file: it must stay inside the folder
  and exist. An absolute path (an older record) gives way to the folder's
  own copy of the same name, unless both exist and differ: a copied run
  folder must not silently read the original's replaced vocabulary.
  """
  if recorded is None:
    return None
  if is_remote(recorded):
    return recorded
  if not os.path.isabs(recorded):
    path = os.path.join(folder, recorded)
    if not is_remote(path) and not is_within(path, folder):
      raise InputError(
        "%s: %s=%s leads out of the run folder" % (where, key, recorded)
      )
    if not _exists(path):
      raise InputError(
        "%s: %s=%s is missing from the run folder" % (where, key, recorded)
      )
    return path
  own = os.path.join(folder, os.path.basename(recorded))
  if not (os.path.isfile(own) and is_within(own, folder)):
    if os.path.isfile(recorded):
      return recorded
    raise InputError(
      "%s: %s=%s does not exist (the run folder was moved away from it: "
      "copy the file beside run_config.json as %s)"
      % (where, key, recorded, os.path.basename(recorded))
    )
  if (
    os.path.isfile(recorded)
    and not _same_file(own, recorded)
    and _read_bytes(own) != _read_bytes(recorded)
  ):
    raise InputError(
      '%s: %s=%s differs from the run folder\'s own %s; write "%s" there '
      "to use the folder's copy"
      % (where, key, recorded, os.path.basename(own), os.path.basename(own))
    )
  return own


def same_content(a, b):
  """Whether files `a` and `b` hold the same bytes."""
  return _same_file(a, b) or _read_bytes(a) == _read_bytes(b)


def input_paths(value):
  """The existing local paths a flag value names: comma-separated paths or
  globs, or a checkpoint prefix (its `prefix.*` files)."""
  paths = []
  for part in str(value).split(","):
    if part and not is_remote(part):
      paths += glob.glob(part) + glob.glob(glob.escape(part) + ".*")
  return paths


def remove(folder, names):
  """Removes entries `names` of `folder`, in order."""
  for name in names:
    path = os.path.join(folder, name)
    if is_remote(path):
      if gfile().isdir(path):
        gfile().rmtree(path)
      else:
        gfile().remove(path)
    elif os.path.isdir(path) and not os.path.islink(path):
      shutil.rmtree(path)
    else:
      os.remove(path)
