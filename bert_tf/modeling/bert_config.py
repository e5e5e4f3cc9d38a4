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


# Key -> (type, lowest value, lowest is allowed, highest value (excluded)).
_RANGES = {
  "vocab_size": (int, 1, True, None),
  "hidden_size": (int, 1, True, None),
  "num_hidden_layers": (int, 1, True, None),
  "num_attention_heads": (int, 1, True, None),
  "intermediate_size": (int, 1, True, None),
  "max_position_embeddings": (int, 1, True, None),
  "type_vocab_size": (int, 1, True, None),
  "hidden_dropout_prob": (float, 0, True, 1),
  "attention_probs_dropout_prob": (float, 0, True, 1),
  "initializer_range": (float, 0, False, None),
}


def _check(key, value):
  """InputError unless `value` has the type and range of `key`."""
  kind, low, low_ok, high = _RANGES[key]
  number = (int,) if kind is int else (int, float)
  if isinstance(value, bool) or not isinstance(value, number):
    raise InputError(
      "key %r must be %s, got %r"
      % (key, "an integer" if kind is int else "a number", value)
    )
  if (
    value != value
    or (value < low if low_ok else value <= low)
    or (high is not None and value >= high)
  ):
    raise InputError(
      "key %r must be in %s%s, %s), got %r"
      % (key, "[" if low_ok else "(", low, high or "inf", value)
    )


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

  @classmethod
  def from_dict(cls, json_object):
    """Builds a config from a dict; unknown keys are kept as attributes."""
    if "vocab_size" not in json_object:
      raise InputError("BERT config has no 'vocab_size'")
    values = dict(json_object)
    return cls(values.pop("vocab_size"), **values)

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
    try:
      return cls.from_dict(data)
    except InputError as e:
      raise InputError("%s: %s" % (json_file, e)) from e

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
