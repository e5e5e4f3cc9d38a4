"""The type of every value run_config.json may hold, checked on reading.

A hand-edited or tampered record must not be half-understood: the string
`"false"` for `do_lower_case` would lower-case (it is truthy), `"abc"` for
`max_seq_length` would fail deep inside featurization. Each known key has
a kind; a value of another kind is one InputError naming the file, the key
and the value. `bert_config` is checked by `BertConfig.from_dict` where it
is used; keys no reader knows are left alone.

Example:
    check(settings, "run/run_config.json")
"""

import math

from bert_tf.io_utils import InputError


def _is_int(value):
  return isinstance(value, int) and not isinstance(value, bool)


_OBJECT = (lambda v: isinstance(v, dict), "a JSON object")
_STR = (lambda v: isinstance(v, str), "a string")
_OPT_STR = (lambda v: v is None or isinstance(v, str), "a string or null")
_BOOL = (lambda v: isinstance(v, bool), "true or false")
_OPT_BOOL = (lambda v: v is None or isinstance(v, bool), "true, false or null")
_COUNT = (lambda v: _is_int(v) and v >= 1, "a whole number >= 1")
_NON_NEGATIVE = (lambda v: _is_int(v) and v >= 0, "a whole number >= 0")
_NUMBER = (
  lambda v: (_is_int(v) or isinstance(v, float)) and math.isfinite(v),
  "a finite number",
)
_NAMES = (
  lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
  "a list of strings",
)
_OPT_NAMES = (lambda v: v is None or _NAMES[0](v), "a list of strings or null")

_TOP = {
  "task": _STR,
  "head": _OBJECT,
  "tokenizer": _OBJECT,
  "max_seq_length": _COUNT,
  "bert_config": _OBJECT,
  "sequence": _OBJECT,
  "training": _OBJECT,
  "bert_config_file": _OPT_STR,
  "kept": _OPT_NAMES,
}
_PARTS = {
  "head": {
    "task_name": _STR,
    "labels": _OPT_NAMES,
    "regression": _BOOL,
    "multi_label": _BOOL,
    "feature_mode": _STR,
    "lstm_units": _COUNT,
    "num_choices": _COUNT,
    "max_predictions_per_seq": _COUNT,
  },
  "tokenizer": {
    "vocab_file": _OPT_STR,
    "spm_model_file": _OPT_STR,
    "do_lower_case": _OPT_BOOL,
  },
  "sequence": {
    "doc_stride": _COUNT,
    "max_query_length": _COUNT,
    "version_2_with_negative": _BOOL,
  },
  "training": {
    "learning_rate": _NUMBER,
    "num_train_epochs": _NUMBER,
    "train_batch_size": _COUNT,
    "warmup_proportion": _NUMBER,
    "num_frozen_layers": _NON_NEGATIVE,
    "init_checkpoint": _OPT_STR,
  },
}


def _short(value):
  text = repr(value)
  return text if len(text) <= 40 else text[:37] + "..."


def _check_one(key, value, kind, path):
  test, description = kind
  if not test(value):
    raise InputError(
      "%s: %s must be %s, not %s" % (path, key, description, _short(value))
    )


def check(settings, path):
  """InputError naming `path` and the key of the first value of the wrong
  kind in RunConfig `settings`."""
  for key, kind in _TOP.items():
    _check_one(key, getattr(settings, key), kind, path)
  for part, kinds in _PARTS.items():
    values = getattr(settings, part)
    for key, kind in kinds.items():
      if key in values:
        _check_one("%s.%s" % (part, key), values[key], kind, path)
  limit = settings.bert_config.get("max_position_embeddings")
  if _is_int(limit) and settings.max_seq_length > limit:
    raise InputError(
      "%s: max_seq_length %d is longer than the model's "
      "max_position_embeddings %d" % (path, settings.max_seq_length, limit)
    )
