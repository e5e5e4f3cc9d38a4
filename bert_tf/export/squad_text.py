"""In-graph answer text of a SQuAD span: the original `get_final_text`.

The original maps the chosen word pieces back to the context like this:
`orig_text` = the span's whole words joined by single spaces; `pred_text` =
its word pieces joined, "##" merged; `tok_text` = `BasicTokenizer` output of
`orig_text` joined by spaces; the answer is the part of `orig_text` whose
non-space characters line up with `tok_text.find(pred_text)`, or all of
`orig_text` when the text is not found (e.g. an [UNK] piece) or the
non-space lengths differ (normalisation changed the text). This module
does the same with string ops and code-point arithmetic, quirks included
(`find` takes the first occurrence), and also returns where the answer
sits in the context, in code points.

Example (inside a tf.function):
    text, start, end = final_text(doc, first_token, last_token, tokens, True)
"""

import tensorflow as tf
import tensorflow_text as text

from bert_tf.export.squad_spans import pad_rows
from bert_tf.tokenizers import tf_text_tokenizer

# Python's str.split() whitespace (what " ".join(x.split()) collapses).
_PY_WHITESPACE = (
  r"[\t\n\x0B\x0C\r\x1C-\x1F \x85\xA0\x{1680}\x{2000}-"
  r"\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}]+"
)
_SPACE = 32


def _flat_range(rows, first, last):
  """Ragged [B, last - first + 1]: flat indices first..last of each row."""
  begin = rows.row_starts() + first
  return tf.ragged.range(begin, begin + tf.maximum(last - first + 1, 0))


def _gather(rows, first, last):
  return tf.gather(pad_rows(rows.flat_values), _flat_range(rows, first, last))


def _find(haystack, needle):
  """Code-point position of the first `needle` in `haystack`, -1 if none
  (`str.find`, "" found at 0), row by row."""

  def find_one(pair):
    parts = tf.strings.split(pair[0], sep=pair[1], maxsplit=1)
    position = tf.strings.length(parts[0], unit="UTF8_CHAR")
    return tf.where(
      tf.equal(pair[1], ""), 0, tf.where(tf.size(parts) == 2, position, -1)
    )

  return tf.cast(
    tf.map_fn(find_one, (haystack, needle), fn_output_signature=tf.int32),
    tf.int64,
  )


def _basic_tokenized(orig_text, do_lower_case):
  """ " ".join(BasicTokenizer.tokenize(orig_text)) (see tf_text_tokenizer)."""
  # pylint: disable=protected-access
  delimiters = tf_text_tokenizer._WORD_DELIMITERS
  normalized = tf_text_tokenizer.normalize(orig_text, do_lower_case)
  tokens = text.regex_split(normalized, r"\s+|" + delimiters, delimiters)
  return tf.strings.reduce_join(tokens, axis=1, separator=" ")


def _nth_non_space(chars, n):
  """Position of the n-th (0-based) non-space code point of each row."""
  non_space = tf.not_equal(chars, _SPACE)
  rank = tf.cumsum(tf.cast(non_space, tf.int64), axis=1) - 1
  return tf.argmax(non_space & tf.equal(rank, n[:, None]), axis=1)


def _dense_chars(strings):
  chars = tf.strings.unicode_decode(strings, "UTF-8").to_tensor(_SPACE)
  # One spare column keeps argmax defined on an all-empty batch.
  return tf.pad(chars, [[0, 0], [0, 1]], constant_values=_SPACE)


def final_text(doc, first_token, last_token, vocab_tokens, do_lower_case):
  """Answer text and [start, end) code-point offsets in the context.

  Args:
    doc: `squad_spans.split_context` output.
    first_token, last_token: [B] document token indices of the span.
    vocab_tokens: token string of each id.
    do_lower_case: the tokenizer's setting.
  """
  token_words = pad_rows(doc["token_words"].flat_values)
  starts = doc["token_words"].row_starts()
  first_word = tf.gather(token_words, starts + first_token)
  last_word = tf.gather(token_words, starts + last_token)
  orig_text = tf.strings.reduce_join(
    _gather(doc["words"], first_word, last_word), axis=1, separator=" "
  )
  pieces = tf.gather(vocab_tokens, _gather(doc["ids"], first_token, last_token))
  pred_text = tf.strings.reduce_join(pieces, axis=1, separator=" ")
  pred_text = tf.strings.regex_replace(pred_text, " ##", "")
  pred_text = tf.strings.regex_replace(pred_text, "##", "")
  pred_text = tf.strings.regex_replace(pred_text, _PY_WHITESPACE, " ")
  pred_text = tf.strings.regex_replace(pred_text, "^ | $", "")
  tok_text = _basic_tokenized(orig_text, do_lower_case)

  found_at = _find(tok_text, pred_text)
  tok_chars, orig_chars = _dense_chars(tok_text), _dense_chars(orig_text)
  count_non_space = lambda c: tf.reduce_sum(
    tf.cast(tf.not_equal(c, _SPACE), tf.int64), axis=1
  )
  before = tf.sequence_mask(tf.maximum(found_at, 0), tf.shape(tok_chars)[1])
  start_ns = found_at - tf.reduce_sum(
    tf.cast(before & tf.equal(tok_chars, _SPACE), tf.int64), axis=1
  )
  end_ns = start_ns + count_non_space(_dense_chars(pred_text)) - 1
  aligned = (found_at >= 0) & tf.equal(
    count_non_space(tok_chars), count_non_space(orig_chars)
  )
  # Otherwise the original answers with all of orig_text.
  orig_len = tf.strings.length(orig_text, unit="UTF8_CHAR")
  first = tf.where(aligned, _nth_non_space(orig_chars, start_ns), 0)
  last = tf.where(
    aligned, _nth_non_space(orig_chars, end_ns), tf.cast(orig_len, tf.int64) - 1
  )
  answer = tf.strings.substr(
    orig_text,
    tf.cast(first, tf.int32),
    tf.cast(last - first + 1, tf.int32),
    unit="UTF8_CHAR",
  )
  word_starts = pad_rows(doc["word_starts"].flat_values)
  word_rows = doc["word_starts"].row_starts()

  def context_offset(position):
    """Code point `position` of orig_text -> its offset in the context."""
    spaces = tf.equal(orig_chars, _SPACE)
    columns = tf.range(tf.shape(orig_chars, out_type=tf.int64)[1])
    before = spaces & (columns[None, :] < position[:, None])
    word = first_word + tf.reduce_sum(tf.cast(before, tf.int64), axis=1)
    word_begin = (
      tf.reduce_max(tf.where(before, columns[None, :], -1), axis=1) + 1
    )
    return tf.gather(word_starts, word_rows + word) + position - word_begin

  return answer, context_offset(first), context_offset(last) + 1
