"""Token offsets in a normalised text, mapped back into the raw text, in-graph.

A tokenizer that normalises its input (deletes characters, lower-cases,
strips accents, collapses spaces) reports where each token lies in the
normalised text. When the normalisation is applied to each raw character
on its own, the bytes each character became give the way back: a token
starts at the first raw byte of the character whose output holds its first
byte, and ends after the character whose output holds its last byte (and
the accents after that one that the normalisation deleted: `attach`).
Offsets are UTF-8 byte offsets into the raw string (as TF Hub
preprocessors' `tokenize_with_offsets` reports them: `tf.strings.substr`
takes them); an empty token gets an empty span where it starts.

Example:
    chars, raw_starts, raw_ends = split_chars(texts)
    per_char = chars.with_flat_values(my_normalize(chars.flat_values))
    ids, starts, limits = tokenizer.tokenize_with_offsets(
        tf.strings.reduce_join(per_char, axis=-1))
    starts, limits = to_source(per_char, raw_starts, raw_ends, starts, limits)
"""

import tensorflow as tf


def split_chars(texts):
  """Raw strings [B] -> (characters [B, (chars)], their first byte, the byte
  after them). Bytes that are not UTF-8 are no character: they are dropped,
  as `decode("utf-8", "ignore")` drops them."""
  chars, starts = tf.strings.unicode_split_with_offsets(
    texts, "UTF-8", errors="ignore"
  )
  starts = tf.cast(starts, tf.int64)
  ends = starts + tf.cast(tf.strings.length(chars), tf.int64)
  return chars, starts, ends


def attach(chars, normalized_chars, raw_ends, attached=None):
  """`raw_ends` where each character's text also takes the characters after
  it that have no output and are combining marks (a deleted accent stays
  with its letter) or `attached` (flags like `chars`' flat values)."""
  flags = tf.equal(normalized_chars.flat_values, "") & (
    tf.strings.regex_full_match(chars.flat_values, r"\p{M}")
    if attached is None
    else tf.strings.regex_full_match(chars.flat_values, r"\p{M}") | attached
  )
  rows = chars.value_rowids()
  positions = tf.range(tf.size(rows, tf.int64))
  flags &= positions != tf.gather(chars.row_splits, rows)  # not a row's first
  # A character and the flagged ones after it form a group.
  group = tf.cumsum(tf.cast(~flags, tf.int64)) - 1
  ends = raw_ends.flat_values
  group_end = tf.math.unsorted_segment_max(ends, group, tf.size(ends))
  return raw_ends.with_flat_values(tf.gather(group_end, group))


def flat_rows(ragged):
  """The batch row of each of `ragged`'s flat values."""
  rows = tf.range(ragged.nrows())
  for ids in ragged.nested_value_rowids():
    rows = tf.gather(rows, ids)
  return rows


def to_source(normalized_chars, raw_starts, raw_ends, starts, limits):
  """Byte offsets into the normalised text -> byte offsets into the raw one.

  Args:
    normalized_chars: [B, (chars)] what each raw character became ("" when
      deleted); per row, together as long as the normalised text.
    raw_starts, raw_ends: [B, (chars)] int64, from `split_chars`.
    starts, limits: ragged int64 [B, ...], offsets into the normalised text.

  Returns:
    (starts, limits) into the raw text, shaped as the given ones.
  """
  lengths = tf.cast(tf.strings.length(normalized_chars.flat_values), tf.int64)
  # The whole batch as one text: each character's output ends there.
  ends = tf.cumsum(lengths)
  row_base = tf.gather(
    tf.concat([[0], ends], 0), normalized_chars.row_splits[:-1]
  )
  base = tf.gather(row_base, flat_rows(starts))
  last = tf.maximum(tf.size(ends, tf.int64) - 1, 0)

  def owner(position):
    """The character whose output holds byte `position` of the batch."""
    return tf.minimum(
      tf.searchsorted(ends, position, side="right", out_type=tf.int64), last
    )

  first = base + starts.flat_values
  limit = base + limits.flat_values
  source_start = tf.gather(raw_starts.flat_values, owner(first))
  source_end = tf.gather(raw_ends.flat_values, owner(limit - 1))
  source_end = tf.where(limit > first, source_end, source_start)
  return (
    starts.with_flat_values(source_start),
    limits.with_flat_values(source_end),
  )
