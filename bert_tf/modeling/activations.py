"""Activation functions selected by `BertConfig.hidden_act`.

Example:
    act = get_activation("gelu")  # tanh-approximate GELU, as the original
    y = act(x)

`gelu` is the original's tanh approximation
`0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3)))`; `gelu_exact` is the erf form
that HuggingFace BERT configs call "gelu".
"""

import keras

from bert_tf.io_utils import InputError


def gelu(x):
  """The original BERT GELU (tanh approximation)."""
  return keras.ops.gelu(x, approximate=True)


def gelu_exact(x):
  """Exact GELU, x * Phi(x), for models trained with the erf form."""
  return keras.ops.gelu(x, approximate=False)


_ACTIVATIONS = {
  "linear": None,
  "": None,
  "relu": keras.ops.relu,
  "gelu": gelu,
  "gelu_exact": gelu_exact,
  "tanh": keras.ops.tanh,
}


def get_activation(name):
  """Maps a `hidden_act` string to a function (None means identity)."""
  if name is None:
    return None
  if not isinstance(name, str) or name.lower() not in _ACTIVATIONS:
    raise InputError(
      "unsupported hidden_act %r (expected one of: %s)"
      % (name, ", ".join(k for k in _ACTIVATIONS if k))
    )
  return _ACTIVATIONS[name.lower()]
