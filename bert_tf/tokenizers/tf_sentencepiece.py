r"""In-graph ALBERT-style SentencePiece, with `SentencePieceTokenizer`'s ids.

`TfSentencePiece` maps raw UTF-8 strings [B] to ragged int32 piece ids
[B, None] as `sentencepiece_tokenizer.SentencePieceTokenizer` gives them
(the tokenizer of the scripts' `--spm_model_file`): ALBERT's normalisation
(whitespace runs to one space, stripped; two backquotes or two apostrophes
to a double quote; NFKD without combining characters; lower-casing when
`do_lower_case`), the model's pieces (tensorflow_text's
`SentencepieceTokenizer` on the model's bytes), and "<digits>," pieces
re-split as digits + ",". The normalisation runs on each character (runs
and pairs are found from their neighbours), so `tokenize_with_offsets`
maps each piece back to its bytes in the raw text (`tf_offsets`).

The character classes are Python's (`str.isspace`, `unicodedata.combining`,
`str.isdigit`: Unicode 14 in Python 3.11), written out for RE2, so both
tokenizers strip and split the same characters.

Example:
    tokenizer = TfSentencePiece("30k-clean.model", do_lower_case=True)
    ids = tokenizer.tokenize(tf.constant(["Hello, World!"]))  # [1, None]
    ids, starts, limits = tokenizer.tokenize_with_offsets(texts)
"""

import functools
import sys
import unicodedata

import sentencepiece as spm
import tensorflow as tf
import tensorflow_text as text

from bert_tf.tokenizers import tf_offsets

MARKER = "\u2581"  # SentencePiece's word-boundary mark


def _char_class(predicate):
  """An RE2 class of the code points `predicate` holds for."""
  ranges, start = [], None
  for cp in range(sys.maxunicode + 2):
    inside = cp <= sys.maxunicode and predicate(chr(cp))
    if inside and start is None:
      start = cp
    elif not inside and start is not None:
      ranges.append((start, cp - 1))
      start = None
  return "[%s]" % "".join(
    "\\x{%X}" % a if a == b else "\\x{%X}-\\x{%X}" % (a, b) for a, b in ranges
  )


@functools.cache
def _classes():
  """(whitespace, combining, digit) classes, built once (~1 s)."""
  return (
    _char_class(str.isspace),
    _char_class(unicodedata.combining),
    _char_class(str.isdigit),
  )


def _runs(flags, first_in_row):
  """(index of each position in its run of True flags, the run's length);
  runs stop at row starts."""
  positions = tf.range(tf.size(flags, tf.int64), dtype=tf.int64)
  run = tf.cumsum(tf.cast(~flags | first_in_row, tf.int64)) - 1
  count = tf.size(flags, tf.int64)
  run_start = tf.math.unsorted_segment_min(
    tf.where(flags, positions, count), run, count
  )
  run_length = tf.math.unsorted_segment_sum(
    tf.cast(flags, tf.int64), run, count
  )
  return positions - tf.gather(run_start, run), tf.gather(run_length, run)


class TfSentencePiece(tf.Module):
  """Raw strings [B] -> ragged int32 piece ids [B, None], in-graph."""

  def __init__(self, model_file, do_lower_case=True):
    super().__init__()
    self.model_file = model_file
    self.do_lower_case = do_lower_case
    with tf.io.gfile.GFile(model_file, "rb") as f:
      model = f.read()
    self._model = text.SentencepieceTokenizer(model=model, out_type=tf.int32)
    self._space, self._combining, self._digit = _classes()
    pieces = spm.SentencePieceProcessor(model_proto=model)
    self._comma_id = pieces.PieceToId(",")
    # The op reads text up to a NUL, Python's SentencePiece reads on (an
    # unknown character): a private-use character the model lacks stands in.
    self._nul = next(
      chr(cp)
      for cp in range(0xE000, 0xF900)
      if pieces.PieceToId(chr(cp)) == pieces.unk_id()
    )

  def _normalized_chars(self, chars):
    """ALBERT's `preprocess_text`, character by character: (what each of
    `chars` [B, (chars)] becomes before lower-casing, which chars end a
    quote pair: the double quote the first became stands for both)."""
    flat = chars.flat_values
    rows = chars.value_rowids()
    first_in_row = tf.range(tf.size(rows, tf.int64)) == tf.gather(
      chars.row_splits, rows
    )
    # A whitespace run between words becomes one space: its first char.
    space = tf.strings.regex_full_match(flat, self._space)
    words = tf.cast(~space, tf.int64)
    before = tf.cumsum(words, exclusive=True)
    row_words = tf.concat([before, [tf.reduce_sum(words)]], 0)
    row_start = tf.gather(tf.gather(row_words, chars.row_splits[:-1]), rows)
    row_end = tf.gather(tf.gather(row_words, chars.row_splits[1:]), rows)
    index, _ = _runs(space, first_in_row)
    kept = space & (index == 0) & (before > row_start)
    kept &= before + words < row_end
    flat = tf.where(space, tf.where(kept, " ", ""), flat)
    # Pairs of `` and '' (left to right) become one double quote.
    seconds = tf.zeros_like(space)
    for quote in ("`", "'"):
      is_quote = tf.equal(flat, quote)
      index, length = _runs(is_quote, first_in_row)
      pair = is_quote & (index % 2 == 0) & (index + 1 < length)
      second = is_quote & (index % 2 == 1)
      seconds |= second
      flat = tf.where(pair, '"', tf.where(second, "", flat))
    flat = text.normalize_utf8(flat, "NFKD")
    flat = tf.strings.regex_replace(flat, self._combining, "")
    flat = tf.where(tf.equal(flat, "\x00"), self._nul, flat)
    return chars.with_flat_values(flat), seconds

  def tokenize(self, texts):
    return self.tokenize_with_offsets(texts)[0]

  def tokenize_with_offsets(self, texts):
    """Raw strings [B] -> (ids [B, None] int32, each piece's first and
    past-the-end byte in the raw text [B, None] int64). A piece that starts
    a word holds the space before it, as SentencePiece counts it."""
    chars, raw_starts, raw_ends = tf_offsets.split_chars(
      tf.convert_to_tensor(texts, tf.string)
    )
    per_char, seconds = self._normalized_chars(chars)
    normalized = tf.strings.reduce_join(per_char, axis=-1)
    if self.do_lower_case:  # on the whole text: a final sigma is ς
      normalized = tf.strings.lower(normalized, encoding="utf-8")
      per_char = per_char.with_flat_values(
        tf.strings.lower(per_char.flat_values, encoding="utf-8")
      )
    ids, starts, limits = self._split_digit_commas(
      *self._model.tokenize_with_offsets(normalized)
    )
    raw_ends = tf_offsets.attach(chars, per_char, raw_ends, seconds)
    return (ids,) + tf_offsets.to_source(
      per_char, raw_starts, raw_ends, starts, limits
    )

  def _split_digit_commas(self, ids, starts, limits):
    """ALBERT's re-split of "<digits>," pieces: the digits encoded again
    (without a leading mark the piece did not have), then ",". The comma
    spans the piece's last byte, each digit piece the bytes it spells
    before it (the first one from the piece's start)."""
    pieces = self._model.id_to_string(ids.flat_values)
    split = tf.strings.regex_full_match(pieces, "(?s).*%s," % self._digit)
    which = tf.where(split)[:, 0]
    count = tf.size(which, tf.int64)
    piece = tf.gather(pieces, which)
    body = tf.strings.regex_replace(piece, ",$", "")
    sub = self._model.tokenize(tf.strings.regex_replace(body, MARKER, ""))
    row = sub.value_rowids()
    sub_text = self._model.id_to_string(sub.flat_values)
    # A leading mark the piece did not have goes (and a piece of only it).
    strip = tf.strings.regex_full_match(sub_text, MARKER + "(?s).*")
    strip &= tf.range(tf.size(row, tf.int64)) == tf.gather(sub.row_splits, row)
    strip &= ~tf.gather(
      tf.strings.regex_full_match(piece, MARKER + "(?s).*"), row
    )
    sub_text = tf.where(
      strip,
      tf.strings.regex_replace(sub_text, "^" + MARKER, ""),
      sub_text,
    )
    sub_ids = tf.where(
      strip, self._model.string_to_id(sub_text), sub.flat_values
    )
    keep = ~(strip & tf.equal(sub_text, ""))
    row, sub_ids = tf.boolean_mask(row, keep), tf.boolean_mask(sub_ids, keep)
    spelled = tf.cast(
      tf.strings.length(
        tf.strings.regex_replace(tf.boolean_mask(sub_text, keep), MARKER, "")
      ),
      tf.int64,
    )
    # Each digit piece ends where the next ones' bytes start, the last one
    # at the comma.
    comma = tf.gather(limits.flat_values, which) - 1
    cumulative = tf.cumsum(spelled)
    row_start = tf.searchsorted(
      row, tf.range(count), side="left", out_type=tf.int64
    )
    before_row = tf.gather(tf.concat([[0], cumulative], 0), row_start)
    total = tf.math.unsorted_segment_sum(spelled, row, count)
    sub_limits = tf.gather(comma - total - before_row, row) + cumulative
    piece_start = tf.gather(tf.gather(starts.flat_values, which), row)
    first = tf.range(tf.size(row, tf.int64)) == tf.gather(row_start, row)
    sub_starts = tf.where(
      first, piece_start, tf.maximum(sub_limits - spelled, piece_start)
    )

    def rows(values, last):
      """Each split piece's new values, then the comma's `last`."""
      return tf.concat(
        [
          tf.RaggedTensor.from_value_rowids(values, row, nrows=count),
          tf.RaggedTensor.from_tensor(tf.expand_dims(last, 1)),
        ],
        axis=1,
      )

    def replace(old, new):
      """`old` [B, P] with the split pieces replaced by `new` rows."""
      flat = old.flat_values
      index = tf.where(
        split,
        tf.size(flat, tf.int64) + tf.cumsum(tf.cast(split, tf.int64)) - 1,
        tf.range(tf.size(flat, tf.int64)),
      )
      candidates = tf.concat(
        [tf.RaggedTensor.from_tensor(tf.expand_dims(flat, 1)), new], axis=0
      )
      return old.with_flat_values(tf.gather(candidates, index)).merge_dims(1, 2)

    return (
      replace(ids, rows(sub_ids, tf.fill([count], self._comma_id))),
      replace(starts, rows(sub_starts, comma)),
      replace(limits, rows(sub_limits, comma + 1)),
    )
