"""`BertConfig`: the architecture hyper-parameters of a BERT model.

Same keys and defaults as the original `modeling.BertConfig`; keys it does not
know (e.g. the `pooler_*` and `directionality` entries of the multilingual
configs) are kept as attributes and written back by `to_json_string`.

Example:
    config = BertConfig.from_json_file(
        "uncased_L-12_H-768_A-12/bert_config.json")
    config.check_max_seq_length(384)
    print(config.hidden_size, config.num_hidden_layers)

`hidden_act` accepts the original values `gelu` (tanh approximation, as the
original), `relu`, `tanh`, `linear` (or empty), plus `gelu_exact`: the exact
erf GELU that HuggingFace calls `"gelu"`, used by imported HF models.
"""

import copy
import json
import re

from absl import logging

from bert_tf.io_utils import InputError

# Every LayerNorm of the original (`layer_norm` in modeling.py).
LAYER_NORM_EPSILON = 1e-12

_DEFAULTS = (
  ("vocab_size", None),
  ("hidden_size", 768),
  ("num_hidden_layers", 12),
  ("num_attention_heads", 12),
  ("intermediate_size", 3072),
  ("hidden_act", "gelu"),
  ("hidden_dropout_prob", 0.1),
  ("attention_probs_dropout_prob", 0.1),
  ("max_position_embeddings", 512),
  ("type_vocab_size", 16),
  ("initializer_range", 0.02),
)


# Key -> (type, lowest, highest, which ends are allowed: "[]", "[)", "(]").
# The highest sizes are far above any published BERT (BERT-large: H 1024,
# 24 layers; multilingual: 119,547 tokens) and keep a hostile config from
# building for minutes (10**6 layers) before the budget below is reached.
_RANGES = {
  "vocab_size": (int, 1, 1 << 22, "[]"),
  "hidden_size": (int, 1, 1 << 14, "[]"),
  "num_hidden_layers": (int, 1, 256, "[]"),
  "num_attention_heads": (int, 1, 1 << 14, "[]"),
  "intermediate_size": (int, 1, 1 << 16, "[]"),
  "max_position_embeddings": (int, 1, 1 << 16, "[]"),
  "type_vocab_size": (int, 1, 1 << 10, "[]"),
  "hidden_dropout_prob": (float, 0, 1, "[)"),
  "attention_probs_dropout_prob": (float, 0, 1, "[)"),
  "initializer_range": (float, 0, 1e3, "(]"),
}

# What a 24 GB machine can fine-tune: every float32 weight with its
# gradient and two Adam slots (16 bytes a parameter).
MEMORY_BYTES = 24 * 10**9
MAX_PARAMETERS = MEMORY_BYTES // 16


def _check(key, value):
  """InputError unless `value` has the type and range of `key`."""
  kind, low, high, ends = _RANGES[key]
  number = (int,) if kind is int else (int, float)
  if isinstance(value, bool) or not isinstance(value, number):
    raise InputError(
      "key %r must be %s, got %r"
      % (key, "an integer" if kind is int else "a number", value)
    )
  above_low = low <= value if ends[0] == "[" else low < value
  below_high = value <= high if ends[1] == "]" else value < high
  if value != value or not (above_low and below_high):
    raise InputError(
      "key %r must be in %s%s, %s%s, got %r"
      % (key, ends[0], low, high, ends[1], value)
    )


def _shape(shape):
  return "[%s]" % ", ".join(str(d) for d in shape)


class BertConfig:
  """Configuration of a `BertEncoder` (original keys, original defaults)."""

  def __init__(self, vocab_size, **kwargs):
    values = dict(_DEFAULTS)
    values.update(kwargs)
    values["vocab_size"] = vocab_size
    for key, value in values.items():
      if key in _RANGES:
        _check(key, value)
      setattr(self, key, value)
    if not isinstance(self.hidden_act, str) and self.hidden_act is not None:
      raise InputError(
        "key 'hidden_act' must be a string, got %r" % (self.hidden_act,)
      )
    if self.hidden_size % self.num_attention_heads:
      raise InputError(
        "key 'hidden_size' (%d) must be a multiple of "
        "'num_attention_heads' (%d)"
        % (self.hidden_size, self.num_attention_heads)
      )
    if self.num_parameters() > MAX_PARAMETERS:
      raise InputError(
        "an encoder of %.3g parameters (vocab_size %d, hidden_size %d, "
        "num_hidden_layers %d, intermediate_size %d) is more than the %.3g "
        "a %d GB machine can train (16 bytes each: weight, gradient, 2 "
        "Adam slots)"
        % (
          self.num_parameters(),
          self.vocab_size,
          self.hidden_size,
          self.num_hidden_layers,
          self.intermediate_size,
          MAX_PARAMETERS,
          MEMORY_BYTES // 10**9,
        )
      )

  def num_parameters(self):
    """Weights of the encoder and its masked-LM head."""
    h, i = self.hidden_size, self.intermediate_size
    tables = self.vocab_size + self.max_position_embeddings
    layer = 4 * (h * h + h) + 2 * (h * i) + i + 5 * h
    mlm = h * h + 3 * h + self.vocab_size
    return (
      (tables + self.type_vocab_size + 2) * h
      + self.num_hidden_layers * layer
      + h * h
      + h
      + mlm
    )

  @classmethod
  def from_dict(cls, json_object, source=None):
    """Builds a config from a dict; unknown keys are kept as attributes.
    `source` (the file, e.g. a run's run_config.json) starts the message of
    a value that is refused."""
    try:
      if not isinstance(json_object, dict):
        raise InputError("a BERT config must be a JSON object")
      if "vocab_size" not in json_object:
        raise InputError("BERT config has no 'vocab_size'")
      values = dict(json_object)
      return cls(values.pop("vocab_size"), **values)
    except InputError as e:
      if source is None:
        raise
      raise InputError("%s: %s" % (source, e)) from e

  @classmethod
  def from_json_file(cls, json_file):
    """Reads a `bert_config.json`; missing or malformed: an InputError."""
    try:
      with open(json_file, "rb") as reader:
        data = json.loads(reader.read().decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as e:
      raise InputError(
        "cannot read BERT config %s: %s" % (json_file, str(e).splitlines()[0])
      ) from e
    if not isinstance(data, dict):
      raise InputError("BERT config %s is not a JSON object" % json_file)
    return cls.from_dict(data, json_file)

  def to_dict(self):
    return copy.deepcopy(self.__dict__)

  def to_json_string(self):
    return json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n"

  def check_max_seq_length(self, max_seq_length):
    """Raises InputError if sequences would not fit the position table."""
    if max_seq_length > self.max_position_embeddings:
      raise InputError(
        "max_seq_length %d is longer than the model's "
        "max_position_embeddings %d"
        % (max_seq_length, self.max_position_embeddings)
      )

  def check_vocab(self, vocab, source):
    """InputError if the vocabulary `vocab` (of file `source`) has ids the
    embedding table lacks (a crash mid-training, or zeros on GPU)."""
    if len(vocab) > self.vocab_size:
      raise InputError(
        "%s: %d tokens, more than the model's vocab_size %d (is it the "
        "model's vocabulary?)" % (source, len(vocab), self.vocab_size)
      )
    if len(vocab) < self.vocab_size // 2:  # most words would be [UNK]
      logging.warning(
        "%s: %d tokens for a model of vocab_size %d: is it the "
        "model's vocabulary?",
        source,
        len(vocab),
        self.vocab_size,
      )

  def check_arrays(self, shapes, source, every_layer=False):
    """InputError if the encoder arrays among `shapes` (original TF1 name ->
    shape) are not the sizes this config gives them, or lack some of its
    layers (with `every_layer`: or have more); checked before a model is
    built. `source` names the arrays in the message."""
    h = self.hidden_size
    expected = {
      "bert/embeddings/word_embeddings": (self.vocab_size, h),
      "bert/embeddings/position_embeddings": (
        self.max_position_embeddings,
        h,
      ),
      "bert/embeddings/token_type_embeddings": (self.type_vocab_size, h),
      "bert/encoder/layer_0/intermediate/dense/kernel": (
        h,
        self.intermediate_size,
      ),
      "bert/pooler/dense/kernel": (h, h),
    }
    for name, shape in expected.items():
      if name in shapes and tuple(shapes[name]) != shape:
        raise InputError(
          "%s: %s is %s, but the config makes it %s (is it this model's "
          "config?)" % (source, name, _shape(shapes[name]), _shape(shape))
        )
    layers = 1 + max(
      (
        int(m.group(1))
        for m in (re.match(r"bert/encoder/layer_(\d+)/", n) for n in shapes)
        if m
      ),
      default=-1,
    )
    if layers and (
      layers < self.num_hidden_layers
      or (every_layer and layers > self.num_hidden_layers)
    ):
      raise InputError(
        "%s: %d encoder layers, but the config's num_hidden_layers is %d"
        % (source, layers, self.num_hidden_layers)
      )

  def check_segments(self, pairs, what):
    """InputError if `what` feeds sentence pairs (segment ids 0 and 1) to a
    model with one token type."""
    if pairs and self.type_vocab_size < 2:
      raise InputError(
        "%s has sentence pairs, but the model's type_vocab_size is %d "
        "(segment id 1 has no embedding)" % (what, self.type_vocab_size)
      )

  def __eq__(self, other):
    return isinstance(other, BertConfig) and self.__dict__ == other.__dict__

  def __repr__(self):
    return "BertConfig(%s)" % self.to_json_string().replace("\n", " ")
