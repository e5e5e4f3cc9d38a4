"""In-graph NER windows and entity spans, as run_ner.py makes and reads them.

`sentence_windows` restates `data_prep.ner.features` for one sentence (in
a stream of context words: its document, or itself) with TF ops: core
windows of at most `capacity` word pieces at word boundaries, each starting
about half a window after the previous one; each grown by whole words
alternately left and right while they fit; each word predicted in the
window where it has the most context (min of the pieces left and right of
it, + 0.01 * the window's pieces, the earlier window on a tie).
`entities` chunks IOB2 tags as seqeval's default mode / conlleval does (an
`I-X` after `O` or another type starts an entity).

Example (inside a tf.function):
    starts, ends, owner = sentence_windows(piece_counts, capacity=126)
    first, last, kind = entities(tags)   # ragged [B, None] each
"""

import tensorflow as tf


def _core_windows(lengths, offsets, capacity):
  """[(start, end)) word ranges as `core_windows`, as two int32 vectors."""
  num_words = tf.size(lengths)
  stride = tf.maximum(1, capacity // 2)
  count_below = lambda limit: tf.reduce_sum(tf.cast(offsets < limit, tf.int32))

  def step(start, done, starts, ends):
    # The last offset within `capacity` pieces of `start` (at least 1 word).
    end = tf.maximum(count_below(offsets[start] + capacity + 1) - 1, start + 1)
    index = starts.size()
    starts, ends = starts.write(index, start), ends.write(index, end)
    # Skip whole words until `stride` pieces are skipped, not past `end`.
    next_start = tf.minimum(count_below(offsets[start] + stride), end)
    return next_start, end >= num_words, starts, ends

  arrays = [
    tf.TensorArray(tf.int32, size=0, dynamic_size=True, element_shape=[])
    for _ in range(2)
  ]
  _, _, starts, ends = tf.while_loop(
    lambda start, done, *_: tf.logical_not(done),
    step,
    [tf.constant(0), tf.equal(num_words, 0)] + arrays,
  )
  return starts.stack(), ends.stack()


def _extend(starts, ends, lengths, offsets, capacity):
  """Every window grown as `extend` does, all windows in step."""
  num_words = tf.size(lengths)
  at = lambda index: tf.gather(
    lengths, tf.clip_by_value(index, 0, num_words - 1)
  )
  room = capacity - (tf.gather(offsets, ends) - tf.gather(offsets, starts))

  def step(starts, ends, room, _):
    left = (starts > 0) & (at(starts - 1) <= room)
    room -= tf.where(left, at(starts - 1), 0)
    starts -= tf.cast(left, tf.int32)
    right = (ends < num_words) & (at(ends) <= room)
    room -= tf.where(right, at(ends), 0)
    ends += tf.cast(right, tf.int32)
    return starts, ends, room, tf.reduce_any(left | right)

  starts, ends, _, _ = tf.while_loop(
    lambda *args: args[-1], step, [starts, ends, room, tf.size(starts) > 0]
  )
  return starts, ends


def _owners(starts, ends, offsets, first, last):
  """The window each word of [first, last) is predicted in (max context,
  first on a tie); scored per (window, word) pair, so memory grows with
  the windows' words, not words x windows."""
  pairs = tf.ragged.range(tf.maximum(starts, first), tf.minimum(ends, last))
  window = tf.cast(pairs.value_rowids(), tf.int32)
  word = pairs.flat_values
  start = tf.gather(offsets, tf.gather(starts, window))
  end = tf.gather(offsets, tf.gather(ends, window))
  left = tf.gather(offsets, word) - start
  right = end - tf.gather(offsets, word + 1)
  # float64 like Python's `min(left, right) + 0.01 * pieces`.
  score = tf.cast(tf.minimum(left, right), tf.float64) + 0.01 * tf.cast(
    end - start, tf.float64
  )
  sentence_word, num_words = word - first, last - first
  best = tf.math.unsorted_segment_max(score, sentence_word, num_words)
  return tf.math.unsorted_segment_min(
    tf.where(score >= tf.gather(best, sentence_word), window, tf.int32.max),
    sentence_word,
    num_words,
  )


def sentence_windows(lengths, capacity, first=0, last=None):
  """Windows of the sentence of words [first, last) (default: all) in a
  stream of words with these piece counts (int32 [n], each 1..capacity; the
  other words are context): window starts and ends (stream word indices,
  end exclusive) and the window of each of its words; none for no words."""
  last = tf.size(lengths) if last is None else last
  offsets = tf.concat([[0], tf.cumsum(lengths)], 0)
  starts, ends = _core_windows(
    lengths[first:last], offsets[first : last + 1] - offsets[first], capacity
  )
  starts, ends = _extend(
    starts + first, ends + first, lengths, offsets, capacity
  )
  return starts, ends, _owners(starts, ends, offsets, first, last)


def entities(tags):
  """Entity chunks of IOB2 tags (ragged [B, None] strings): first word,
  last word + 1 and type of each, ragged [B, None] in sentence order."""
  flat = tags.flat_values
  type_of = lambda t: tf.strings.regex_replace(t, "^(O$|[BI]-)", "")
  kind = type_of(flat)
  is_begin = tf.strings.substr(flat, 0, 2) == "B-"
  inner = tf.strings.substr(flat, 0, 2) == "I-"
  # The previous word's tag, "O" before a sentence's first word.
  position = tf.range(tf.size(flat))
  row_start = tf.cast(
    tf.gather(tags.row_starts(), tags.value_rowids()), tf.int32
  )
  previous = tf.where(
    position == row_start, "O", tf.concat([["O"], flat[:-1]], 0)
  )
  goes_on = inner & (type_of(previous) == kind)
  starts = (is_begin | inner) & tf.logical_not(goes_on)
  chunk = tf.cumsum(tf.cast(starts, tf.int32)) - 1
  member = starts | goes_on
  begin = tf.boolean_mask(position, starts)
  end = (
    tf.math.unsorted_segment_max(
      tf.boolean_mask(position, member),
      tf.boolean_mask(chunk, member),
      tf.size(begin),
    )
    + 1
  )
  row = tf.gather(tags.value_rowids(), begin)
  to_rows = lambda values: tf.RaggedTensor.from_value_rowids(
    values, row, nrows=tags.nrows()
  )
  local = lambda index: index - tf.gather(row_start, begin)
  return (
    to_rows(local(begin)),
    to_rows(local(end)),
    to_rows(tf.boolean_mask(kind, starts)),
  )
