"""The checks of the Python API's inputs: each bad element is named by its
index ("input 1: None is not a text") before any work is done.

Example:
    texts = strings(examples(x, "texts"), "input %d")
"""

import numpy as np

from bert_tf.io_utils import InputError


def shown(value, width=40):
  """`repr(value)`, cut to `width` characters for a one-line message."""
  text = repr(value)
  return text if len(text) <= width else text[: width - 3] + "..."


def examples(x, what):
  """The user's inputs as a list; one text, a non-sequence or an empty
  list is an InputError (`what`: what each input should be)."""
  if isinstance(x, (str, bytes)):
    raise InputError("x: a list of %s, not one text" % what)
  try:
    x = list(x)
  except TypeError:
    raise InputError(
      "x: a list of %s, not %s" % (what, type(x).__name__)
    ) from None
  if not x:
    raise InputError("x: no inputs")
  return x


def text(value, where):
  """`value` as a str (bytes: UTF-8); an InputError naming `where` (e.g.
  "input 1's context") if it is not a text TensorFlow can take."""
  if isinstance(value, bytes):
    try:
      return value.decode("utf-8")
    except UnicodeDecodeError as e:
      raise InputError(
        "%s: bytes that are not UTF-8 (at byte %d)" % (where, e.start)
      ) from None
  if not isinstance(value, str):
    raise InputError("%s: %s is not a text" % (where, shown(value)))
  try:
    value.encode("utf-8")
  except UnicodeEncodeError as e:
    raise InputError(
      "%s: not encodable as UTF-8 (character %d)" % (where, e.start)
    ) from None
  return str(value)


def strings(values, where):
  """Texts as a numpy string array; `where % i` names element i in errors
  (e.g. "input %d's context")."""
  return np.array(
    [text(v, where % i) for i, v in enumerate(values)], dtype=object
  )
