"""In-graph SQuAD features and span choice, as the original run_squad.py.

The functions here restate, on batched (ragged) tensors, the original's
`read_squad_examples` word split, `convert_examples_to_features` doc-stride
windows with `_check_is_max_context`, and the choice of the best span in
`write_predictions` (data_prep/squad in this repository). Scores are summed
in float64 like the original's Python floats, and ties go to the earlier
window / higher-ranked index, as the original's stable sorts do.

Example (inside a tf.function):
    doc = split_context(contexts, tokenizer)
    win = doc_windows(query.row_lengths(), doc["ids"].row_lengths(), 384, 128)
"""

import tensorflow as tf
import tensorflow_text as text

# The original's whitespace for SQuAD contexts: ' ', \t, \r, \n, U+202F.
_WHITESPACE = (32, 9, 13, 10, 0x202F)
_WHITESPACE_RE = r"[ \t\r\n\x{202F}]+"


def split_context(contexts, tokenizer):
  """Words, their character starts and word-piece ids of each context.

  Returns a dict of ragged tensors over the batch: `words` [B, W] strings,
  `word_starts` [B, W] int64 (code-point offsets in the context), `ids`
  [B, T] word-piece ids (each word tokenized on its own, as the original),
  `token_words` [B, T] the word of each piece.
  """
  words = text.regex_split(contexts, _WHITESPACE_RE)
  chars = tf.strings.unicode_decode(contexts, "UTF-8")
  is_space = tf.reduce_any(
    tf.equal(chars.flat_values[:, None], _WHITESPACE), axis=1
  )
  local = tf.ragged.range(chars.row_lengths()).flat_values
  previous_space = tf.concat([[True], is_space[:-1]], 0)
  word_start = tf.logical_not(is_space) & ((local == 0) | previous_space)
  batch = tf.shape(contexts, out_type=tf.int64)[0]
  word_starts = tf.RaggedTensor.from_value_rowids(
    tf.boolean_mask(local, word_start),
    tf.boolean_mask(chars.value_rowids(), word_start),
    nrows=batch,
  )
  pieces = tokenizer(words.flat_values)  # [all words, pieces]
  per_context = tf.math.unsorted_segment_sum(
    pieces.row_lengths(), words.value_rowids(), batch
  )
  word_index = tf.ragged.range(words.row_lengths()).flat_values
  return {
    "words": words,
    "word_starts": word_starts,
    "ids": tf.RaggedTensor.from_row_lengths(pieces.flat_values, per_context),
    "token_words": tf.RaggedTensor.from_row_lengths(
      tf.gather(word_index, pieces.value_rowids()), per_context
    ),
  }


def doc_windows(query_lengths, doc_lengths, max_seq_length, doc_stride):
  """The original's doc spans: all windows of all examples, example-major.

  Per example, `max_tokens = max_seq_length - len(query) - 3` tokens a
  window, moving by `min(max_tokens, doc_stride)` until the last token is
  covered; a context without tokens has no window. Returns a dict of [N]
  int64 tensors (`example`, `index` within it, `start`, `length`, and the
  example's `max_tokens`, `step`, `count`, `doc_length`) plus `counts` [B].
  """
  max_tokens = max_seq_length - 3 - query_lengths
  step = tf.minimum(max_tokens, doc_stride)
  rest = tf.maximum(doc_lengths - max_tokens, 0)
  counts = tf.where(doc_lengths > 0, 1 + (rest + step - 1) // step, 0)
  index = tf.ragged.range(counts)
  example = index.value_rowids()
  per_window = lambda x: tf.gather(x, example)
  start = index.flat_values * per_window(step)
  return {
    "example": example,
    "index": index.flat_values,
    "start": start,
    "length": tf.minimum(
      per_window(doc_lengths) - start, per_window(max_tokens)
    ),
    "max_tokens": per_window(max_tokens),
    "step": per_window(step),
    "count": per_window(counts),
    "doc_length": per_window(doc_lengths),
    "counts": counts,
  }


def max_context(windows, doc_offsets, max_seq_length, max_overlap):
  """[N, S] bools: the position is a document token whose best window (the
  original's `_check_is_max_context`: max of min(left, right) context +
  0.01 * window length, first on ties) is this one. `doc_offsets` [N] is
  the feature position of each window's first document token;
  `max_overlap` bounds how many windows share a token."""
  w = {k: v[:, None, None] for k, v in windows.items() if k != "counts"}
  position = tf.range(max_seq_length, dtype=tf.int64)[None, :, None]
  token = w["start"] + position - doc_offsets[:, None, None]  # [N, S, 1]
  in_doc = (token >= w["start"]) & (token < w["start"] + w["length"])
  last = tf.minimum(w["count"] - 1, token // w["step"])
  # Candidate windows in ascending order, so argmax keeps the first best.
  k = last - max_overlap + 1 + tf.range(max_overlap, dtype=tf.int64)
  k_start = k * w["step"]
  k_end = k_start + tf.minimum(w["doc_length"] - k_start, w["max_tokens"]) - 1
  contains = (k >= 0) & (k_start <= token) & (token <= k_end)
  score = tf.cast(
    tf.minimum(token - k_start, k_end - token), tf.float64
  ) + 0.01 * tf.cast(k_end - k_start + 1, tf.float64)
  score = tf.where(contains, score, -float("inf"))
  best = tf.gather(k, tf.argmax(score, axis=-1), batch_dims=2)
  in_doc = in_doc[:, :, 0]
  return in_doc & tf.equal(best, w["index"][:, :, 0]), in_doc


def _per_example(values, counts, fill):
  """[N, M] per window -> [B, counts * M + 1] per example, padded by `fill`
  (the extra column keeps argmax defined for examples without windows)."""
  ragged = tf.RaggedTensor.from_row_lengths(values, counts).merge_dims(1, 2)
  dense = ragged.to_tensor(fill)
  return tf.concat(
    [dense, tf.fill([tf.shape(dense)[0], 1], tf.cast(fill, values.dtype))], 1
  )


def best_spans(
  start_logits,
  end_logits,
  is_max,
  in_doc,
  counts,
  n_best_size,
  max_answer_length,
):
  """The best valid span of each example, as `write_predictions` ranks them.

  Among each window's `n_best_size` top start and end positions, a pair is
  valid when both are document tokens, the start is max-context, end >=
  start and the span has at most `max_answer_length` tokens. Returns a dict
  over the batch [B]: `found`, `window` (index into the N windows),
  `start`, `end` (feature positions), `score` (float64 start + end logit).
  """
  n = tf.minimum(n_best_size, tf.shape(start_logits)[1])
  start_values, starts = tf.math.top_k(start_logits, n)
  end_values, ends = tf.math.top_k(end_logits, n)
  take = lambda x, i: tf.gather(x, i, batch_dims=1)
  valid = (
    (take(in_doc, starts) & take(is_max, starts))[:, :, None]
    & take(in_doc, ends)[:, None, :]
    & (ends[:, None, :] >= starts[:, :, None])
    & (ends[:, None, :] - starts[:, :, None] < max_answer_length)
  )
  score = (
    tf.cast(start_values, tf.float64)[:, :, None]
    + tf.cast(end_values, tf.float64)[:, None, :]
  )
  score = tf.reshape(tf.where(valid, score, -float("inf")), [-1, n * n])
  by_example = _per_example(score, counts, -float("inf"))
  best = tf.argmax(by_example, axis=1, output_type=tf.int32)
  best_score = tf.reduce_max(by_example, axis=1)
  found = best_score > -float("inf")
  first_window = tf.cumsum(counts, exclusive=True)
  # Examples without a span point at the placeholder row N.
  window = tf.where(
    found,
    first_window + tf.cast(best // (n * n), tf.int64),
    tf.shape(start_logits, out_type=tf.int64)[0],
  )
  pair = tf.stack([window, tf.cast(best % (n * n), tf.int64)], 1)
  pick = lambda x: tf.gather_nd(pad_rows(x), pair)
  return {
    "found": found,
    "window": window,
    "start": tf.cast(pick(tf.repeat(starts, n, axis=1)), tf.int64),
    "end": tf.cast(pick(tf.tile(ends, [1, n])), tf.int64),
    "score": tf.where(found, best_score, 0.0),
  }


def null_scores(start_logits, end_logits, counts):
  """v2: per example the lowest `start[0] + end[0]` of its windows (the
  original's score_null; 1000000 when there is no window)."""
  null = tf.cast(start_logits[:, 0], tf.float64) + tf.cast(
    end_logits[:, 0], tf.float64
  )
  lowest = tf.reduce_min(tf.RaggedTensor.from_row_lengths(null, counts), 1)
  return tf.where(counts > 0, lowest, 1000000.0)


def pad_rows(x):
  """`x` [N, ...] with a zero row N appended (a placeholder to gather for
  examples without a span)."""
  return tf.concat(
    [x, tf.zeros(tf.concat([[1], tf.shape(x)[1:]], 0), x.dtype)], 0
  )
