"""Text -> model inputs for `extract_features.py`, as the original does it.

Example:
    examples = read_examples("input.txt")  # "A ||| B" lines become pairs
    features = convert_examples_to_features(examples, 128, tokenizer)
    features[0].tokens  # ["[CLS]", ..., "[SEP]"], unpadded

`unique_id` is the 0-based line number. Pairs are truncated to
`seq_length - 3` word pieces by popping from the end of the longer side,
singles to `seq_length - 2`.
"""

import collections
import re

from bert_tf.io_utils import InputError
from data_prep.common.sequence_pairs import pack_tokens

InputExample = collections.namedtuple(
  "InputExample", ["unique_id", "text_a", "text_b"]
)

InputFeatures = collections.namedtuple(
  "InputFeatures",
  ["unique_id", "tokens", "input_ids", "input_mask", "input_type_ids"],
)

_PAIR = re.compile(r"^(.*) \|\|\| (.*)$")


def read_examples(input_file):
  """One example per line; lines are stripped, empty lines kept."""
  try:
    with open(input_file, "rb") as f:
      text = f.read().decode("utf-8")
  except (OSError, UnicodeDecodeError) as e:
    raise InputError(
      "--input_file=%s: unreadable (%s)" % (input_file, str(e).splitlines()[0])
    ) from e
  lines = text.split("\n")
  if lines and not lines[-1]:
    lines.pop()  # The empty item after the final newline is not a line.
  examples = []
  for unique_id, line in enumerate(lines):
    line = line.strip()
    m = _PAIR.match(line)
    if m is None:
      examples.append(InputExample(unique_id, line, None))
    else:
      examples.append(InputExample(unique_id, m.group(1), m.group(2)))
  return examples


def convert_example(example, seq_length, tokenizer):
  """`[CLS] A [SEP] (B [SEP])`, padded with 0 to `seq_length`."""
  tokens_a = tokenizer.tokenize(example.text_a)
  tokens_b = tokenizer.tokenize(example.text_b) if example.text_b else None
  tokens, type_ids = pack_tokens(tokens_a, tokens_b, seq_length)
  try:
    input_ids = tokenizer.convert_tokens_to_ids(tokens)
  except KeyError as e:
    raise InputError("vocab file has no token %s" % e) from e
  padding = [0] * (seq_length - len(input_ids))
  return InputFeatures(
    example.unique_id,
    tokens,
    input_ids + padding,
    [1] * len(input_ids) + padding,
    type_ids + padding,
  )


def convert_examples_to_features(examples, seq_length, tokenizer):
  return [convert_example(e, seq_length, tokenizer) for e in examples]
