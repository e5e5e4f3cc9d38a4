"""Reads SQuAD v1.1 / v2.0 JSON into `SquadExample`s like the original.

The original `read_squad_examples` is reproduced exactly: a context is split
into words on ' ', '\\t', '\\r', '\\n' and U+202F only, `char_to_word_offset`
maps each character to its word (leading whitespace maps to -1), and when
training an answer whose words do not contain the cleaned answer text is
skipped ("Could not find answer"). Here the skip is counted and returned, and
malformed input (bad JSON, missing keys, wrong types, answers outside the
context, duplicate question ids) raises a one-line `InputError` naming the
file and question id instead of a traceback.

Examples of one paragraph share the same `doc_tokens` list, which lets the
featurizer tokenize each context once.

Example:
    examples = read_squad_examples("dev-v1.1.json", is_training=False,
                                   version_2_with_negative=False)
"""

import itertools
import json
import operator
import re

from bert_tf.io_utils import InputError
from bert_tf.tokenizers import tokenization


class SquadExample:
  """One question with its (shared) context words and, if training, answer."""

  def __init__(
    self,
    qas_id,
    question_text,
    doc_tokens,
    orig_answer_text=None,
    start_position=None,
    end_position=None,
    is_impossible=False,
  ):
    self.qas_id = qas_id
    self.question_text = question_text
    self.doc_tokens = doc_tokens
    self.orig_answer_text = orig_answer_text
    self.start_position = start_position
    self.end_position = end_position
    self.is_impossible = is_impossible

  def __repr__(self):
    return "SquadExample(qas_id=%r, question_text=%r, start_position=%r)" % (
      self.qas_id,
      self.question_text,
      self.start_position,
    )


# The original's whitespace: ' ', '\t', '\r', '\n' and U+202F only.
_WORD = re.compile("[^ \t\r\n\u202f]+")
# ASCII characters that str.split() takes for whitespace too.
_OTHER_ASCII_SPACE = "\x0b\x0c\x1c\x1d\x1e\x1f"


def split_context(text):
  """The context's words (`doc_tokens`) with the original's rule."""
  if text.isascii() and not any(c in text for c in _OTHER_ASCII_SPACE):
    return text.split()  # the same words, 1.5x as fast as the regex
  return _WORD.findall(text)


def char_to_word_offset(text):
  """Per character, its word: the last word starting at or before it (-1
  before the first word), as the original's `char_to_word_offset`."""
  starts = [m.start() for m in _WORD.finditer(text)]
  # Runs of -1, 0, 1, ... as long as the gaps between word starts.
  run_lengths = map(operator.sub, starts + [len(text)], [0] + starts)
  return list(
    itertools.chain.from_iterable(
      map(itertools.repeat, range(-1, len(starts)), run_lengths)
    )
  )


def _get(obj, key, kind, where):
  """obj[key] checked for type `kind`; raises InputError naming `where`."""
  if not isinstance(obj, dict):
    raise InputError(
      "%s: expected a JSON object, got %s" % (where, type(obj).__name__)
    )
  if key not in obj:
    raise InputError("%s: missing key %r" % (where, key))
  value = obj[key]
  # bool is a subclass of int; an answer_start of `true` is still wrong.
  if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
    raise InputError(
      "%s: %r should be %s, got %s"
      % (where, key, kind.__name__, type(value).__name__)
    )
  return value


def load_squad_json(input_file):
  """The file's "data" list; InputError if it is not SQuAD-shaped JSON."""
  return _get(_load_json(input_file), "data", list, input_file)


def _load_json(input_file):
  try:
    with open(input_file, "rb") as f:
      return json.loads(f.read().decode("utf-8"))
  except UnicodeDecodeError as e:
    raise InputError("%s: not UTF-8 (%s)" % (input_file, e.reason)) from None
  except json.JSONDecodeError as e:
    raise InputError("%s: not valid JSON (%s)" % (input_file, e)) from None


def _training_answer(qa, where, context, offsets, doc_tokens):
  """(answer_text, start_word, end_word), or None for "could not find"."""
  answers = _get(qa, "answers", list, where)
  if len(answers) != 1:
    raise InputError(
      "%s: for training, each question should have exactly 1 "
      "answer (found %d)" % (where, len(answers))
    )
  answer = answers[0]
  text = _get(answer, "text", str, where + " answer")
  start = _get(answer, "answer_start", int, where + " answer")
  if not text:
    raise InputError("%s: the answer text is empty" % where)
  if start < 0 or start + len(text) > len(context):
    raise InputError(
      "%s: answer_start %d + answer length %d is outside the "
      "context (%d characters)" % (where, start, len(text), len(context))
    )
  start_position = offsets[start]
  end_position = offsets[start + len(text) - 1]
  actual_text = " ".join(doc_tokens[start_position : (end_position + 1)])
  cleaned = " ".join(tokenization.whitespace_tokenize(text))
  if actual_text.find(cleaned) == -1:
    _warn("Could not find answer: '%s' vs. '%s'", actual_text, cleaned)
    return None
  return text, start_position, end_position


def _paragraph_examples(
  paragraph,
  input_file,
  where,
  is_training,
  version_2_with_negative,
  skipped,
  seen_ids,
):
  """Yields the SquadExamples of one paragraph."""
  context = _get(paragraph, "context", str, where)
  qas = _get(paragraph, "qas", list, where)
  doc_tokens = split_context(context)
  # Only training answers need it.
  offsets = char_to_word_offset(context) if is_training else None
  for qa_index, qa in enumerate(qas):
    qas_id = _get(qa, "id", str, "%s qas[%d]" % (where, qa_index))
    q_where = "%s question %s" % (input_file, qas_id)
    if qas_id in seen_ids:
      raise InputError("%s: duplicate question id" % q_where)
    seen_ids.add(qas_id)
    question_text = _get(qa, "question", str, q_where)
    example = SquadExample(qas_id, question_text, doc_tokens)
    if is_training:
      if version_2_with_negative:
        example.is_impossible = _get(qa, "is_impossible", bool, q_where)
      if example.is_impossible:
        example.start_position = example.end_position = -1
        example.orig_answer_text = ""
      else:
        answer = _training_answer(qa, q_where, context, offsets, doc_tokens)
        if answer is None:
          skipped.append(qas_id)
          continue
        (
          example.orig_answer_text,
          example.start_position,
          example.end_position,
        ) = answer
    yield example


def data_examples(data, source, is_training, version_2_with_negative):
  """(examples, skipped_ids) of a SQuAD "data" list (`load_squad_json`'s,
  or built in memory); `source` names it in errors. skipped = "could not
  find answer"."""
  examples = []
  skipped = []
  seen_ids = set()
  for a_index, article in enumerate(data):
    a_where = "%s data[%d]" % (source, a_index)
    for p_index, paragraph in enumerate(
      _get(article, "paragraphs", list, a_where)
    ):
      p_where = "%s paragraphs[%d]" % (a_where, p_index)
      examples.extend(
        _paragraph_examples(
          paragraph,
          source,
          p_where,
          is_training,
          version_2_with_negative,
          skipped,
          seen_ids,
        )
      )
  return examples, skipped


def load_squad_examples(input_file, is_training, version_2_with_negative):
  """Returns (examples, skipped_ids): skipped = "could not find answer"."""
  return data_examples(
    load_squad_json(input_file),
    input_file,
    is_training,
    version_2_with_negative,
  )


def _warn(*args):
  # absl.logging is imported on first use: featurizing the dev set takes
  # well under a second, and the import alone 25 ms.
  from absl import logging  # pylint: disable=g-import-not-at-top

  logging.warning(*args)


def read_squad_examples(input_file, is_training, version_2_with_negative=False):
  """The original's `read_squad_examples`: a list of SquadExample."""
  examples, skipped = load_squad_examples(
    input_file, is_training, version_2_with_negative
  )
  if skipped:
    _warn(
      "%s: skipped %d questions whose answer was not found in the context",
      input_file,
      len(skipped),
    )
  return examples
