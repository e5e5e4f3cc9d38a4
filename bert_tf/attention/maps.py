"""Attention maps as data, and the one reader of an untrusted `.npz` of them.

`AttentionMaps` holds a set of inputs (one per line of
`extract_features.py`'s input), each with its word pieces, segment ids
(0 = text A, 1 = text B) and attention probabilities float32 [layers, heads,
T, T] (row = query token, column = key token), and the model layers they
come from: 0-based, or counted from the end (-1 = last) when the model's
depth is unknown.

Example:
    maps = read_npz("out.jsonl.attentions.npz")  # every line, checked
    maps.layer_name(0), maps.examples[0].tokens, maps.examples[0].attentions
"""

import dataclasses
import re
import zipfile

import numpy as np

from bert_tf.io_utils import InputError

# Softmax rows sum to 1; bfloat16 extraction rounds each probability to 8
# bits, so a long row may sum to 1 +- a few 1e-3.
_ROW_SUM_TOLERANCE = 0.02
# A larger member is not an attention map of any BERT that fits in memory
# (24 layers x 16 heads x 512 x 512 float32 is 400 MB).
_MAX_MEMBER_BYTES = 1 << 30
_LINE = re.compile(r"^line_(\d+)_attentions\.npy$")
SPECIAL_TOKENS = ("[CLS]", "[SEP]")


@dataclasses.dataclass
class Example:
  name: str  # "line 3", shown on the page
  tokens: list
  segments: list
  attentions: np.ndarray  # float32 [layers, heads, T, T]


@dataclasses.dataclass
class AttentionMaps:
  layers: list  # one model layer number per first axis entry
  examples: list
  source: str  # the file or checkpoint they were read from

  @property
  def num_heads(self):
    return self.examples[0].attentions.shape[1]

  def layer_name(self, index):
    """How the page and the figures name `layers[index]`."""
    layer = self.layers[index]
    if layer >= 0:
      return str(layer)
    return "last" if layer == -1 else "last%d" % (layer + 1)


def segments_of(tokens):
  """Segment ids as the original packs `[CLS] A [SEP] B [SEP]`: 0 up to the
  first [SEP], 1 after it."""
  first = tokens.index("[SEP]") + 1 if "[SEP]" in tokens else len(tokens)
  return [0] * first + [1] * (len(tokens) - first)


def check_probabilities(attentions, tokens, layers, where):
  """InputError unless `attentions` is a float [len(layers), heads, T, T]
  array of softmax rows over `tokens` (finite, 0..1, each row summing to 1):
  a map with NaN or 7.0 in it is not drawn as probabilities."""
  if attentions.dtype.kind != "f" or attentions.ndim != 4:
    raise InputError(
      "%s: expected float attentions [layers, heads, tokens, tokens], got "
      "%s %s" % (where, attentions.dtype, list(attentions.shape))
    )
  size = len(tokens)
  if attentions.shape[0] != len(layers):
    raise InputError(
      "%s: %d layers of attentions, but it names %d (%s)"
      % (where, attentions.shape[0], len(layers), layers)
    )
  if attentions.shape[1] < 1 or attentions.shape[2:] != (size, size):
    raise InputError(
      "%s: attentions of shape %s do not match its %d tokens"
      % (where, list(attentions.shape), size)
    )
  if not np.isfinite(attentions).all():
    raise InputError("%s: attentions hold NaN or infinite values" % where)
  low, high = float(attentions.min()), float(attentions.max())
  if low < 0 or high > 1 + 1e-6:
    raise InputError(
      "%s: attentions range over [%g, %g], not probabilities"
      % (where, low, high)
    )
  sums = attentions.sum(-1, dtype=np.float64)
  worst = float(np.abs(sums - 1).max())
  if worst > _ROW_SUM_TOLERANCE:
    raise InputError(
      "%s: an attention row sums to %.4g, not 1 (not softmax probabilities)"
      % (where, float(sums.flat[np.abs(sums - 1).argmax()]))
    )


def read_npz(path, lines=None, flag="attentions_file"):
  """The lines `lines` (default: all, in line order) of an `.npz` written by
  `extract_features.py --output_attentions`, each checked; any damage or
  tampering ends in one InputError naming `--flag=path`. Pickled objects are
  never loaded."""
  where = "--%s=%s" % (flag, path)
  try:
    with np.load(path, allow_pickle=False) as data:
      members = data.zip.infolist()
      for member in members:
        if member.file_size > _MAX_MEMBER_BYTES:
          raise InputError(
            "%s: member %s holds %d bytes, too large for an attention map"
            % (where, member.filename, member.file_size)
          )
      stored = sorted(
        int(m.group(1)) for m in map(_LINE.match, data.zip.namelist()) if m
      )
      layers = _layers(data, where)
      if lines is None:
        lines = stored
      if not lines:
        raise InputError("%s: holds no line of attentions" % where)
      examples = [_example(data, line, layers, where) for line in lines]
  except (OSError, ValueError, EOFError, zipfile.BadZipFile) as e:
    if isinstance(e, InputError):
      raise
    raise InputError("%s: unreadable (%s)" % (where, _first_line(e))) from e
  if len({e.attentions.shape[1] for e in examples}) > 1:
    raise InputError("%s: its lines have different numbers of heads" % where)
  return AttentionMaps(layers, examples, path)


def _layers(data, where):
  if "layers" not in data.files:
    raise InputError(
      "%s: no `layers` array (not written by extract_features.py "
      "--output_attentions)" % where
    )
  layers = data["layers"]
  if layers.dtype.kind not in "iu" or layers.ndim != 1 or not layers.size:
    raise InputError(
      "%s: `layers` must be a list of layer indexes, got %s %s"
      % (where, layers.dtype, list(layers.shape))
    )
  layers = [int(i) for i in layers]
  if len(set(layers)) != len(layers):
    raise InputError("%s: `layers` repeats a layer: %s" % (where, layers))
  return layers


def _example(data, line, layers, where):
  name = "line_%d_" % line
  if name + "attentions" not in data.files or name + "tokens" not in data.files:
    raise InputError(
      "%s: no line %d (or not written by extract_features.py "
      "--output_attentions)" % (where, line)
    )
  tokens = data[name + "tokens"]
  if tokens.dtype.kind != "U" or tokens.ndim != 1 or not tokens.size:
    raise InputError(
      "%s: %stokens must be a list of word pieces, got %s %s"
      % (where, name, tokens.dtype, list(tokens.shape))
    )
  tokens = [str(t) for t in tokens]
  attentions = data[name + "attentions"]
  check_probabilities(attentions, tokens, layers, "%s line %d" % (where, line))
  return Example(
    "line %d" % line,
    tokens,
    segments_of(tokens),
    attentions.astype(np.float32),
  )


def check_comparable(before, after):
  """InputError unless `after` holds the same inputs (word pieces), layers
  and heads as `before`: a before/after comparison needs both."""
  what = "%s and %s" % (before.source, after.source)
  if before.layers != after.layers:
    raise InputError(
      "%s hold different layers: %s, %s" % (what, before.layers, after.layers)
    )
  if before.num_heads != after.num_heads:
    raise InputError(
      "%s have %d and %d heads: not the same architecture"
      % (what, before.num_heads, after.num_heads)
    )
  if len(before.examples) != len(after.examples):
    raise InputError(
      "%s hold %d and %d lines"
      % (what, len(before.examples), len(after.examples))
    )
  for a, b in zip(before.examples, after.examples):
    if a.tokens != b.tokens:
      raise InputError(
        "%s: %s holds different word pieces (%s / %s)"
        % (what, a.name, " ".join(a.tokens[:8]), " ".join(b.tokens[:8]))
      )


def _first_line(e):
  return (str(e).strip().splitlines() or [type(e).__name__])[0]
