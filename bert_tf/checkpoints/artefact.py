"""Reading a model folder that someone else made: a SavedModel or TF Hub
folder, a HuggingFace folder, an original-layout checkpoint folder.

Every file is reached through `Artefact`, so a name the artefact declares
(a SavedModel's asset `../../secret.txt`, `assets/vocab.txt` as a symlink to
`~/.ssh/id_rsa`) cannot make a command read, and copy into its output, a
file outside the folder: a path that leaves the folder, by `..`, an absolute
name or a symlink, is refused in one line. So are files that are not
regular files (a FIFO would block the read) or larger than the reader takes,
and JSON that does not parse. Symlinks that stay inside are followed, and so
are those of a HuggingFace cache snapshot (`models--*/snapshots/<rev>/`) into
the cache's own `blobs/`.

Example:
    model = Artefact("bert_en_L-2", "--input")
    metadata = model.read_json("assets.extra/export_config.json")
    vocab = model.file("assets", asset_name)   # real path, inside the folder
"""

import json
import os

from bert_tf.io_utils import InputError

# Largest config or metadata JSON read (BERT's are under 1 KiB).
JSON_LIMIT = 1 << 20


def _root(folder):
  """The folder whose inside a path must stay in: `folder`, or for a
  HuggingFace cache snapshot the repo's cache folder (its files are symlinks
  to ../../blobs/)."""
  real = os.path.realpath(folder)
  parent = os.path.dirname(real)
  cache = os.path.dirname(parent)
  if os.path.basename(parent) == "snapshots" and os.path.basename(
    cache
  ).startswith("models--"):
    return cache
  return real


class Artefact:
  """An untrusted model folder; `label` names it in messages (e.g. the flag:
  "--input")."""

  def __init__(self, folder, label=None):
    folder = os.fspath(folder)
    self.folder = folder
    self.name = "%s=%s" % (label, folder) if label else folder
    if not os.path.isdir(folder):
      raise InputError("%s: not a folder" % self.name)
    self.root = _root(folder)

  def shown(self, *parts):
    """The path of `parts` as the user knows it (for messages)."""
    return os.path.join(self.folder, *parts)

  def path(self, *parts):
    """The real path of `parts` (names relative to the folder), which may not
    exist; InputError if it leaves the folder."""
    name = os.path.join(*parts)
    if os.path.isabs(name) or ".." in name.replace("\\", "/").split("/"):
      raise InputError(
        "%s: names %r, a path out of its folder" % (self.name, name)
      )
    real = os.path.realpath(os.path.join(self.folder, name))
    if os.path.commonpath([real, self.root]) != self.root:
      raise InputError(
        "%s leads out of %s (a symlink to %s)"
        % (self.shown(name), self.name, real)
      )
    return real

  def exists(self, *parts):
    """True if `parts` is there (inside the folder, or InputError)."""
    return os.path.lexists(os.path.join(self.folder, *parts)) and bool(
      self.path(*parts)
    )

  def file(self, *parts, required=True):
    """The real path of the regular file `parts`; None if it is absent and
    not `required`, else InputError."""
    real = self.path(*parts)
    if not os.path.lexists(os.path.join(self.folder, *parts)):
      if not required:
        return None
      raise InputError("%s: no such file" % self.shown(*parts))
    if not os.path.isfile(real):
      raise InputError("%s: not a regular file" % self.shown(*parts))
    return real

  def names(self, *parts, prefix="", suffix=""):
    """Sorted names of the regular files in sub-folder `parts` (the folder
    itself when empty) that have `prefix` and `suffix`; InputError if one
    leads out of the folder."""
    if not os.path.isdir(self.path(*parts) if parts else self.root):
      return []
    names = sorted(
      n
      for n in os.listdir(os.path.join(self.folder, *parts))
      if n.startswith(prefix) and n.endswith(suffix)
    )
    for name in names:
      self.file(*parts, name)
    return names

  def read_bytes(self, *parts, limit=None):
    """The bytes of file `parts`; InputError if larger than `limit`."""
    real = self.file(*parts)
    size = os.path.getsize(real)
    if limit is not None and size > limit:
      raise InputError(
        "%s: %d bytes, more than the %d such a file has"
        % (self.shown(*parts), size, limit)
      )
    try:
      with open(real, "rb") as f:
        return f.read()
    except OSError as e:
      raise InputError("%s: %s" % (self.shown(*parts), e.strerror)) from e

  def read_json(self, *parts):
    """The JSON object (dict) of file `parts`; one line if it is not one."""
    raw = self.read_bytes(*parts, limit=JSON_LIMIT)
    try:
      data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
      raise InputError(
        "%s: not JSON (%s)"
        % (self.shown(*parts), str(e).splitlines()[0] or type(e).__name__)
      ) from e
    if not isinstance(data, dict):
      raise InputError("%s: not a JSON object" % self.shown(*parts))
    return data

  def error(self, parts, problem):
    """An InputError naming file `parts` (a tuple) of the artefact."""
    return InputError("%s: %s" % (self.shown(*parts), problem))
