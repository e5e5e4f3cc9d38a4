"""Reading pre-training text into tokenized documents, and sharding it.

Input: one sentence per line, blank lines between documents. As in the
original, lines are split on "\\n" only, decoded as UTF-8 (but bad bytes or
NULs stop with file:line instead of being dropped)
and `strip()`ped; a blank line starts a new document, every other line
becomes one tokenized segment (a line without tokens adds nothing), and empty
documents are dropped. A document does not end at the end of a file: the
next file's first lines continue it, as in the original.

Example:
    files = expand_input_files("wiki/*.txt,books.txt")
    documents = read_documents([Shard(f) for f in files], tokenizer)
"""

import collections
import glob
import os

from tqdm import tqdm

from bert_tf.io_utils import decode_text
from bert_tf.io_utils import gfile
from bert_tf.io_utils import InputError
from bert_tf.io_utils import is_remote
from bert_tf.tokenizers.tokenization import convert_to_unicode

# Bytes [start, end) of one input file; end None = to the end of the file.
Shard = collections.namedtuple(
  "Shard", ["path", "start", "end"], defaults=[0, None]
)


def _open_binary(path):
  return gfile().GFile(path, "rb") if is_remote(path) else open(path, "rb")


def _file_size(path):
  return gfile().stat(path).length if is_remote(path) else os.path.getsize(path)


def expand_input_files(input_file):
  """Comma-separated globs -> input files; an unmatched glob is an error.

  Each glob's matches come in directory order, as `tf.gfile.Glob` gives them.
  """
  files = []
  for pattern in input_file.split(","):
    matches = (
      gfile().glob(pattern)
      if is_remote(pattern)
      else [p for p in glob.glob(pattern) if os.path.isfile(p)]
    )
    if not matches:
      raise InputError("--input_file: no file matches %r" % pattern)
    files.extend(matches)
  return files


def shard_lines(shard):
  """Yields the raw lines of a shard (bytes, split on "\\n" only)."""
  with _open_binary(shard.path) as f:
    if shard.start:
      f.seek(shard.start)
    remaining = None if shard.end is None else shard.end - shard.start
    while remaining is None or remaining > 0:
      line = f.readline()
      if not line:
        break
      if remaining is not None:
        remaining -= len(line)
      yield line


def read_documents(shards, tokenizer, progress=True):
  """Tokenized non-empty documents of the shards, in reading order."""
  total = sum(_shard_size(s) for s in shards)
  documents = [[]]
  with tqdm(
    total=total,
    unit="B",
    unit_scale=True,
    desc="reading",
    disable=None if progress else True,
  ) as bar:
    for shard in shards:
      where = (
        shard.path
        if not shard.start
        else "%s (from byte %d)" % (shard.path, shard.start)
      )
      for number, line in enumerate(shard_lines(shard), 1):
        bar.update(len(line))
        line = decode_text(line, where, number).strip()
        if not line:
          documents.append([])
          continue
        tokens = tokenizer.tokenize(line)
        if tokens:
          documents[-1].append(tokens)
  return [d for d in documents if d]


def _shard_size(shard):
  end = _file_size(shard.path) if shard.end is None else shard.end
  return end - shard.start


def plan_shards(files, max_shard_bytes, min_shards=1):
  """Cuts files into shards of at most about `max_shard_bytes` at blank lines.

  Files are cut further, evenly by size, until there are at least
  `min_shards` shards (so one big file still feeds every worker). A cut
  falls after the first blank line at or after the even split point, so
  every document stays whole; a file without a blank line stays whole.
  """
  sizes = [_file_size(f) for f in files]
  target = max(1, min(max_shard_bytes, -(-sum(sizes) // max(1, min_shards))))
  shards = []
  for path, size in zip(files, sizes):
    pieces = max(1, -(-size // target))
    cuts = sorted(
      {_blank_line_after(path, size * k // pieces) for k in range(1, pieces)}
      - {size}
    )
    bounds = [0] + cuts + [size]
    shards.extend(
      Shard(path, lo, hi) for lo, hi in zip(bounds, bounds[1:]) if hi > lo
    )
  return shards


def _blank_line_after(path, offset):
  """Byte offset just after the first blank line starting at/after offset."""
  with _open_binary(path) as f:
    f.seek(max(0, offset - 1))
    position = f.tell()
    if offset > 0:
      position += len(f.readline())  # finish the line `offset` falls in
    for line in iter(f.readline, b""):
      position += len(line)
      if not convert_to_unicode(line).strip():
        return position
  return position
