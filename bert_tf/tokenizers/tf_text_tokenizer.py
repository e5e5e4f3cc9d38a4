r"""In-graph BERT tokenization with tensorflow_text, for serving and tf.data.

`TfTextTokenizer` maps raw UTF-8 strings [B] to ragged word-piece ids
[B, None] with the ids `tokenization.FullTokenizer` gives; `pack` builds the
original's `[CLS] a [SEP] (b [SEP])` model inputs. Both are plain TF ops, so
they run in tf.data and export inside a SavedModel that takes raw text.

The word pieces come from `text.FastBertTokenizer` (linear-time WordPiece,
faster than `text.BertTokenizer` and as exact here). Its own normaliser does
not match the original (its lower-casing is NFKC case folding: "ﬁ" -> "fi",
"²" -> "2", "ß" -> "ss"; it turns Cc/Cf into spaces instead of deleting them),
so the text is normalised first with ops that restate the original:
  1. drop bytes that are not UTF-8, as `decode("utf-8", "ignore")` does;
  2. delete U+0000, U+FFFD and every Cc/Cf character except \t \n \r;
  3. map \t \n \r, Zs, U+2028 and U+2029 to a space (Python's `split()`
     splits on the last two);
  4. if lower-casing: `str.lower` (full mapping, final sigma included), NFD,
     drop Mn.
FastBertTokenizer then splits on spaces, punctuation (ASCII symbols and P*)
and CJK ideographs like the original. Its word limit counts UTF-8 bytes, the
original's counts characters (a word over 200 gives [UNK]), so a row with a
run of 51 or more non-space characters (the only kind that can hold a word
over 200 bytes) is redone on an exact path that splits words, counts their
characters and word-pieces each one; natural text rarely takes it.

Checked against FullTokenizer on every code point (as "xCy C z"), the golden
edge cases and corpus sample, SQuAD dev, and random invalid UTF-8. The one
known disagreement: characters that Python 3.11's `unicodedata` (Unicode 14)
leaves unassigned (Cn) but TF's ICU knows, 65 code points in uncased mode
and 30 in cased, e.g. U+0ECE (Lao Yamakkan: Mn in ICU, so stripped when
lower-casing), U+11F43 (Kawi danda: punctuation in ICU, so split off) and
U+13439 (an Egyptian hieroglyph format control: Cf in ICU, so deleted). A
Python with another Unicode version moves this set; the original itself
depends on it.

`word_pieces_with_offsets` adds each piece's raw-text bytes (`tf_offsets`).

Example:
    tokenizer = TfTextTokenizer("vocab.txt", do_lower_case=True)
    ids = tokenizer(tf.constant(["Who wrote it?"]))   # ragged int32 [1, None]
    features = tokenizer.pack([ids, tokenizer(contexts)], max_seq_length=384)
"""

import keras
import tensorflow as tf
import tensorflow_text as text

from bert_tf.tokenizers import tf_offsets
from bert_tf.tokenizers import tokenization

_DELETE = r"[\x00-\x08\x0B\x0C\x0E-\x1F\x7F-\x9F\p{Cf}\x{FFFD}]"
_SPACE = r"[\t\n\r\p{Zs}\x{2028}\x{2029}]"
_MAX_CHARS_PER_WORD = 200  # the original WordpieceTokenizer's limit
_LONG_RUN = r".*[^ ]{%d}.*" % (_MAX_CHARS_PER_WORD // 4 + 1)
# Characters that are words on their own: punctuation and CJK ideographs.
_WORD_DELIMITERS = (
  r"[!-/:-@\[-`{-~\p{P}\x{4E00}-\x{9FFF}\x{3400}-\x{4DBF}"
  r"\x{20000}-\x{2A6DF}\x{2A700}-\x{2B73F}\x{2B740}-\x{2B81F}"
  r"\x{2B820}-\x{2CEAF}\x{F900}-\x{FAFF}\x{2F800}-\x{2FA1F}]"
)


def normalize(texts, do_lower_case):
  """The original's `_clean_text` (and lower-casing + accent stripping)."""
  # Bytes that are not UTF-8 are dropped, as by decode("utf-8", "ignore").
  texts = tf.strings.unicode_transcode(texts, "UTF-8", "UTF-8", errors="ignore")
  texts = tf.strings.regex_replace(texts, _DELETE, "")
  texts = tf.strings.regex_replace(texts, _SPACE, " ")
  if do_lower_case:
    texts = tf.strings.lower(texts, encoding="utf-8")
    texts = text.normalize_utf8(texts, "NFD")
    texts = tf.strings.regex_replace(texts, r"\p{Mn}", "")
  return texts


def pack_inputs(segments, max_seq_length, cls_id, sep_id):
  """Packs one or two ragged id segments [B, None] as the original does.

  Pairs are truncated longest-first, popping from the end of the longer
  segment and from the second on ties (`_truncate_seq_pair`), to
  max_seq_length - 3. A single segment keeps its first max_seq_length - 2
  ids. Like the original, a row whose second segment is empty is packed as
  a single text, and one whose second segment is truncated away
  (max_seq_length <= 4) gets no second [SEP]. Returns int32 [B,
  max_seq_length] `input_ids`, `input_mask`, `segment_ids`, zero-padded.

  The lengths are computed in closed form and every position gathers its id
  in one op: tensorflow_text's trimmer, `combine_segments` and
  `pad_model_inputs` (the same values, `tests/tokenizers`) took ~300 small
  ops for a pair, more executor time than their work on a single request.
  """
  if len(segments) not in (1, 2):
    raise ValueError(
      "pack_inputs takes 1 or 2 segments, got %d" % len(segments)
    )
  int64 = lambda t: tf.cast(t, tf.int64)  # row splits may be int32
  a = segments[0]
  la = int64(a.row_lengths())
  if len(segments) == 2:
    b = segments[1]
    b_values, b_starts, lb = (
      b.values,
      int64(b.row_starts()),
      int64(b.row_lengths()),
    )
  else:
    b_values, b_starts, lb = a.values[:0], tf.zeros_like(la), tf.zeros_like(la)
  pair = lb > 0
  lengths = tf.constant([max_seq_length - 2, max_seq_length - 3], tf.int64)
  budget = tf.maximum(tf.gather(lengths, tf.cast(pair, tf.int32)), 0)
  # Popping from the longer and from b on ties leaves b at most half.
  ta = tf.minimum(
    la, tf.where(pair, tf.maximum(budget - lb, (budget + 1) // 2), budget)
  )
  tb = tf.minimum(lb, budget - ta)  # 0 for a single text
  # Ids at the end of one flat array: a's, b's, [CLS], [SEP], padding.
  values = tf.concat(
    [
      int64(a.values),
      int64(b_values),
      tf.constant([cls_id, sep_id, 0], tf.int64),
    ],
    0,
  )
  n = tf.shape(values, out_type=tf.int64)[0]
  cls, sep, pad = n - 3, n - 2, n - 1
  col = lambda t: tf.expand_dims(t, 1)
  ta, tb = col(ta), col(tb)
  p = tf.range(max_seq_length, dtype=tf.int64)[tf.newaxis]
  b_first = ta + 2  # position of b's first id
  in_b = (p >= b_first) & (p < b_first + tb)
  second_sep = (p == b_first + tb) & (tb > 0)
  index = tf.where(
    p == 0,
    cls,
    tf.where(
      p <= ta,
      col(int64(a.row_starts())) + p - 1,
      tf.where(
        (p == ta + 1) | second_sep,
        sep,
        tf.where(
          in_b, col(b_starts + tf.size(a.values, tf.int64)) + p - b_first, pad
        ),
      ),
    ),
  )
  length = ta + 2 + tb + tf.cast(tb > 0, tf.int64)
  return {
    "input_ids": tf.cast(tf.gather(values, index), tf.int32),
    "input_mask": tf.cast(p < length, tf.int32),
    "segment_ids": tf.cast(in_b | second_sep, tf.int32),
  }


def _id_ordered_tokens(vocab_file):
  """Token of each id; ids the original never emits get unmatchable names."""
  inv = {i: t for t, i in tokenization.load_vocab(vocab_file).items() if t}
  # A duplicated token keeps only its last id and an empty line is no token;
  # "[" is split off as punctuation, so these names can never match a word.
  return [inv.get(i, "[unreachable %d]" % i) for i in range(max(inv) + 1)]


class TfTextTokenizer(keras.layers.Layer):
  """Raw strings [B] -> ragged int32 word-piece ids [B, None], in-graph."""

  def __init__(self, vocab_file, do_lower_case=True, **kwargs):
    super().__init__(trainable=False, **kwargs)
    self.vocab_file = vocab_file
    self.do_lower_case = do_lower_case
    tokens = _id_ordered_tokens(vocab_file)
    self.cls_id = tokens.index("[CLS]")
    self.sep_id = tokens.index("[SEP]")
    self._fast = text.FastBertTokenizer(
      vocab=tokens,
      max_bytes_per_word=_MAX_CHARS_PER_WORD,
      token_out_type=tf.int32,
    )
    # Exact path: at most 4 bytes per character.
    self._wordpiece = text.FastWordpieceTokenizer(
      vocab=tokens,
      max_bytes_per_word=4 * _MAX_CHARS_PER_WORD,
      token_out_type=tf.int32,
      no_pretokenization=True,
    )

  def call(self, texts):
    texts = normalize(
      tf.convert_to_tensor(texts, tf.string), self.do_lower_case
    )
    # A word over 200 bytes has a run of >= 51 non-space characters; only
    # such rows can need the exact path, and a request without one skips
    # its ops.
    redo = tf.strings.regex_full_match(texts, _LONG_RUN)
    return tf.cond(
      tf.reduce_any(redo),
      lambda: self._fast_or_exact(texts, redo),
      lambda: self._fast.tokenize(texts),
    )

  def _fast_or_exact(self, texts, redo):
    redo_rows = tf.where(redo)[:, 0]
    keep_rows = tf.where(tf.logical_not(redo))[:, 0]
    merged = tf.concat(
      [
        self._fast.tokenize(tf.gather(texts, keep_rows)),
        self._exact_ids(tf.gather(texts, redo_rows)).merge_dims(1, 2),
      ],
      0,
    )
    return tf.gather(merged, tf.argsort(tf.concat([keep_rows, redo_rows], 0)))

  def _words(self, texts):
    """(words [B, words], a word of over 200 characters as [UNK]; their
    first and past-the-end bytes in `texts`; which were over 200)."""
    words, begins, ends = text.regex_split_with_offsets(
      texts, r"\s+|" + _WORD_DELIMITERS, _WORD_DELIMITERS
    )
    too_long = tf.strings.length(words.flat_values, unit="UTF8_CHAR") > (
      _MAX_CHARS_PER_WORD
    )
    words = words.with_flat_values(
      tf.where(too_long, "[UNK]", words.flat_values)
    )
    return words, begins, ends, too_long

  def _exact_ids(self, texts):
    """[B, words, pieces]; a word of over 200 characters is [UNK]."""
    return self._wordpiece.tokenize(self._words(texts)[0])

  def word_pieces(self, texts):
    """Raw strings [B] -> ragged int32 ids [B, words, pieces] (the exact
    path, kept per word as TF Hub preprocessors' `tokenize` returns them)."""
    return self._exact_ids(
      normalize(tf.convert_to_tensor(texts, tf.string), self.do_lower_case)
    )

  def word_pieces_with_offsets(self, texts):
    """`word_pieces` and, shaped alike, each piece's first and past-the-end
    byte in the raw text (int64): a piece spans the characters it spells,
    [UNK] its whole word. Offsets come back through each character's own
    normalisation (`tf_offsets`)."""
    texts = tf.convert_to_tensor(texts, tf.string)
    words, begins, ends, too_long = self._words(
      normalize(texts, self.do_lower_case)
    )
    ids, starts, limits = self._wordpiece.tokenize_with_offsets(words)
    word = starts.values.value_rowids()  # each piece's word
    begin = tf.gather(begins.flat_values, word)
    whole = tf.gather(too_long, word)  # the [UNK] of a too-long word
    starts = starts.with_flat_values(
      begin + tf.where(whole, tf.zeros_like(begin), starts.flat_values)
    )
    limits = limits.with_flat_values(
      tf.where(
        whole, tf.gather(ends.flat_values, word), begin + limits.flat_values
      )
    )
    chars, raw_starts, raw_ends = tf_offsets.split_chars(texts)
    per_char = chars.with_flat_values(
      normalize(chars.flat_values, self.do_lower_case)
    )
    raw_ends = tf_offsets.attach(chars, per_char, raw_ends)
    return (ids,) + tf_offsets.to_source(
      per_char, raw_starts, raw_ends, starts, limits
    )

  def pack(self, segments, max_seq_length):
    """`pack_inputs` with this vocab's [CLS] and [SEP] ids."""
    return pack_inputs(segments, max_seq_length, self.cls_id, self.sep_id)

  def get_config(self):
    config = super().get_config()
    config.update(vocab_file=self.vocab_file, do_lower_case=self.do_lower_case)
    return config
