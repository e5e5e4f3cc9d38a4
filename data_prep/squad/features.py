"""SQuAD examples -> doc-span features, exactly as the original, serialized.

Reproduces the original `convert_examples_to_features`: the query is cut to
`max_query_length` word pieces, each context word is WordPiece-tokenized on
its own (`tok_to_orig_index` / `orig_to_tok_index`), training answers are
refined by `_improve_answer_span`, the context is cut into spans of
`max_seq_length - len(query) - 3` tokens every `doc_stride` tokens, each span
becomes `[CLS] query [SEP] span [SEP]` zero-padded, and training labels point
at `[CLS]` (0, 0) when the answer is not inside the span. `unique_id` counts
from 1000000000 over the whole file.

One path: `FeatureEncoder` renders every feature straight to what is
written -- its `task_schemas.squad_schema` values and its sidecar line
(records.py) -- and `convert_examples_to_features` (the original's API)
reads its `InputFeatures` back from those. Why not build InputFeatures and
serialize them: encoding ~400 tokens per feature (json.dumps, varints)
would add about half to the run time. Here a context shared by several
questions is tokenized and encoded once (varint ids, JSON tokens, JSON word
indices, per word) and each span takes slices of those strings; the
max-context flags of all spans come from one pass over the tokens instead
of one scan of every span per token, once per span layout.

Example:
    tokenizer = tokenization.FullTokenizer(vocab_file, do_lower_case=True)
    features = []
    convert_examples_to_features(examples, tokenizer, 384, 128, 64,
                                 is_training=False, output_fn=features.append)
"""

import functools
import itertools
import json
import operator

from bert_tf.io_utils import InputError
from bert_tf.records import example_bytes as eb
from bert_tf.records.task_schemas import squad_schema
from bert_tf.tokenizers import sentencepiece_tokenizer
from data_prep.squad import records

FIRST_UNIQUE_ID = 1000000000
InputFeatures = records.InputFeatures  # where the original defines it


def check_feature_settings(max_seq_length, doc_stride, max_query_length):
  """Raises InputError for settings the original rejects or loops on."""
  if max_seq_length <= max_query_length + 3:
    raise InputError(
      "The max_seq_length (%d) must be greater than max_query_length "
      "(%d) + 3" % (max_seq_length, max_query_length)
    )
  if doc_stride < 1:
    raise InputError("--doc_stride must be at least 1, got %d" % doc_stride)
  if max_query_length < 0:
    raise InputError(
      "--max_query_length must be >= 0, got %d" % max_query_length
    )


def improve_answer_span(
  doc_tokens, input_start, input_end, tokenizer, orig_answer_text
):
  """The original `_improve_answer_span`: the tightest exact re-tokenization.

  SentencePiece pieces are compared as text: the answer's first piece has a
  word-boundary mark that the same piece inside a word, after a quote, say,
  lacks.
  """
  join = " ".join
  if isinstance(tokenizer, sentencepiece_tokenizer.SentencePieceTokenizer):
    join = sentencepiece_tokenizer.pieces_to_text
  tok_answer_text = join(tokenizer.tokenize(orig_answer_text))
  for new_start in range(input_start, input_end + 1):
    for new_end in range(input_end, new_start - 1, -1):
      if join(doc_tokens[new_start : (new_end + 1)]) == tok_answer_text:
        return new_start, new_end
  return input_start, input_end


def doc_spans(num_tokens, max_tokens_for_doc, doc_stride):
  """[(start, length)] windows, as the original's `_DocSpan` loop."""
  spans = []
  start_offset = 0
  while start_offset < num_tokens:
    length = min(num_tokens - start_offset, max_tokens_for_doc)
    spans.append((start_offset, length))
    if start_offset + length == num_tokens:
      break
    start_offset += min(length, doc_stride)
  return spans


def max_context_flags(spans):
  """Per span, per token: is this span the token's max-context span?

  Same scores and tie rule (first span wins) as `_check_is_max_context`.
  """
  if len(spans) == 1:
    return [[True] * spans[0][1]]
  num_tokens = spans[-1][0] + spans[-1][1]
  best_score = [None] * num_tokens
  best_span = [None] * num_tokens
  for span_index, (start, length) in enumerate(spans):
    end = start + length - 1
    for position in range(start, end + 1):
      score = min(position - start, end - position) + 0.01 * length
      if best_score[position] is None or score > best_score[position]:
        best_score[position] = score
        best_span[position] = span_index
  return [
    [best_span[p] == i for p in range(start, start + length)]
    for i, (start, length) in enumerate(spans)
  ]


def answer_positions(answer, start, length, doc_offset):
  """Training (start_position, end_position) in a span; (0, 0) = [CLS]."""
  tok_start, tok_end = answer
  # An impossible answer (-1, -1) is never inside a span.
  if tok_start >= start and tok_end < start + length:
    return tok_start - start + doc_offset, tok_end - start + doc_offset
  return 0, 0


class _Memo(dict):
  """A dict that fills a missing key with `fn(key)`; `map(memo.__getitem__,
  keys)` then encodes a whole list at C speed."""

  def __init__(self, fn):
    super().__init__()
    self._fn = fn

  def __missing__(self, key):
    value = self[key] = self._fn(key)
    return value


# JSON list items followed by the separator json.dumps writes, as bytes
# (JSON escapes every non-ASCII character).
_TOKEN_ITEM = _Memo(lambda token: json.dumps(token).encode("ascii") + b", ")
_INDEX_ITEM = _Memo(b"%d, ".__mod__)


def _json_items(memo, values):
  return b"".join(map(memo.__getitem__, values))


def _json(value):
  return json.dumps(value).encode("ascii")


def _offsets(lengths):
  """Start of every item, and the end, in the items' concatenation."""
  return list(itertools.accumulate(lengths, initial=0))


def _chain(lists):
  return list(itertools.chain.from_iterable(lists))


def _word(pieces, ids):
  """(pieces, ids, packed ids, JSON pieces) of a word."""
  return pieces, ids, eb.packed_int64(ids), _json_items(_TOKEN_ITEM, pieces)


@functools.lru_cache(maxsize=4096)
def _span_layout(num_tokens, max_tokens_for_doc, doc_stride):
  """(spans, per span its max-context flags as JSON); a paragraph's
  questions with equally long queries share it."""
  spans = doc_spans(num_tokens, max_tokens_for_doc, doc_stride)
  if len(spans) <= 1:
    return spans, [_json([True] * num_tokens)] * len(spans)
  return spans, list(map(_json, max_context_flags(spans)))


class _Paragraph:
  """A context's word pieces, encoded once; a span's encodings are slices.

  Built from the `_word` tuples of the context words.
  """

  def __init__(self, words):
    self.words = words
    word_pieces, _, packed_ids, json_pieces = (
      zip(*words) if words else ((),) * 4
    )
    self.counts = list(map(len, word_pieces))
    self.num_tokens = sum(self.counts)
    self.packed_ids = b"".join(packed_ids)
    self.json_pieces = b"".join(json_pieces)
    # tok_to_orig_index: word i once per piece.
    self.json_origs = b"".join(
      map(
        operator.mul,
        map(_INDEX_ITEM.__getitem__, range(len(words))),
        self.counts,
      )
    )

  @functools.cached_property
  def pieces(self):
    return _chain(word[0] for word in self.words)

  @functools.cached_property
  def orig_to_tok_index(self):
    """First piece of each word."""
    return _offsets(self.counts)[:-1]

  @functools.cached_property
  def _piece_offsets(self):
    origs = _chain(map(itertools.repeat, range(len(self.counts)), self.counts))
    ids = _chain(word[1] for word in self.words)
    return (
      _offsets(map(len, map(eb.VARINTS.__getitem__, ids))),
      _offsets(map(len, map(_TOKEN_ITEM.__getitem__, self.pieces))),
      _offsets(map(len, map(_INDEX_ITEM.__getitem__, origs))),
    )

  def span(self, start, end):
    """(packed ids, JSON pieces, JSON word indices) of pieces [start, end),
    each JSON item followed by ", "."""
    if start == 0 and end == self.num_tokens:  # most spans
      return self.packed_ids, self.json_pieces, self.json_origs
    ids, pieces, origs = self._piece_offsets
    return (
      self.packed_ids[ids[start] : ids[end]],
      self.json_pieces[pieces[start] : pieces[end]],
      self.json_origs[origs[start] : origs[end]],
    )


class FeatureEncoder:
  """Examples -> [(squad_schema values without unique_ids, sidecar tail)].

  `with_sidecar=False` leaves the tails None (training files).
  """

  def __init__(
    self,
    tokenizer,
    max_seq_length,
    doc_stride,
    max_query_length,
    is_training,
    with_sidecar=True,
  ):
    check_feature_settings(max_seq_length, doc_stride, max_query_length)
    self.tokenizer = tokenizer
    self.max_seq_length = max_seq_length
    self.doc_stride = doc_stride
    self.max_query_length = max_query_length
    self.is_training = is_training
    self.with_sidecar = with_sidecar
    self.schema = squad_schema(max_seq_length, is_training)
    try:
      cls_id, sep_id = tokenizer.convert_tokens_to_ids(["[CLS]", "[SEP]"])
    except KeyError as e:
      raise InputError("the vocab file has no %s token" % e) from None
    self._cls, self._sep = eb.VARINTS[cls_id], eb.VARINTS[sep_id]
    self._words = {}
    self._paragraph = (None, None)  # (doc_tokens, _Paragraph) of the last

  def _tokenized(self, words):
    """`_word` of each word. A word's pieces depend on it alone, and most
    words recur: they are cached."""
    entries = list(map(self._words.get, words))
    if None in entries:
      if len(self._words) >= 200000:
        self._words.clear()
      tokenize = self.tokenizer.tokenize
      to_ids = self.tokenizer.convert_tokens_to_ids
      for i in [i for i, entry in enumerate(entries) if entry is None]:
        word = words[i]
        entry = self._words.get(word)  # a word repeated in this text
        if entry is None:
          pieces = tokenize(word)
          entry = self._words[word] = _word(pieces, to_ids(pieces))
        entries[i] = entry
    return entries

  def _query(self, question_text):
    """The question's pieces and ids, cut to max_query_length. Tokenizing
    a text is tokenizing its space-separated parts (" " stays a separator
    through cleaning), so the parts go through the word cache."""
    pieces, ids, _, _ = zip(*self._tokenized(question_text.split(" ")))
    return (
      _chain(pieces)[: self.max_query_length],
      _chain(ids)[: self.max_query_length],
    )

  def _paragraph_of(self, doc_tokens):
    # A paragraph's questions are adjacent and share `doc_tokens`.
    if self._paragraph[0] is not doc_tokens:
      self._paragraph = (doc_tokens, _Paragraph(self._tokenized(doc_tokens)))
    return self._paragraph[1]

  def _answer(self, example, paragraph):
    """The training answer's (first, last) piece; (-1, -1) if impossible."""
    if example.is_impossible:
      return -1, -1
    tok_start = paragraph.orig_to_tok_index[example.start_position]
    if example.end_position < len(example.doc_tokens) - 1:
      tok_end = paragraph.orig_to_tok_index[example.end_position + 1] - 1
    else:
      tok_end = paragraph.num_tokens - 1
    return improve_answer_span(
      paragraph.pieces,
      tok_start,
      tok_end,
      self.tokenizer,
      example.orig_answer_text,
    )

  def encode(self, example, example_index):
    """The (values, tail) of every feature of `example`, in span order."""
    query, query_ids = self._query(example.question_text)
    paragraph = self._paragraph_of(example.doc_tokens)
    spans, json_flags = _span_layout(
      paragraph.num_tokens,
      self.max_seq_length - len(query) - 3,
      self.doc_stride,
    )
    if not spans:  # a context without word pieces
      return []
    doc_offset = len(query) + 2
    ids_head = self._cls + eb.packed_int64(query_ids) + self._sep
    if self.is_training:
      answer = self._answer(example, paragraph)
    if self.with_sidecar:
      json_query = _json_items(_TOKEN_ITEM, query)
    out = []
    for span_index, (start, length) in enumerate(spans):
      ids, json_pieces, json_origs = paragraph.span(start, start + length)
      num_real = doc_offset + length + 1
      pad = bytes(self.max_seq_length - num_real)
      values = {
        "input_ids": ids_head + ids + self._sep + pad,
        "input_mask": b"\x01" * num_real + pad,
        "segment_ids": bytes(doc_offset) + b"\x01" * (length + 1) + pad,
      }
      if self.is_training:
        values["start_positions"], values["end_positions"] = answer_positions(
          answer, start, length, doc_offset
        )
        values["is_impossible"] = int(example.is_impossible)
      tail = None
      if self.with_sidecar:
        tail = records.sidecar_tail(
          example_index,
          span_index,
          example.qas_id,
          b'["[CLS]", %s"[SEP]", %s"[SEP]"]' % (json_query, json_pieces),
          doc_offset,
          b"[%s]" % json_origs[:-2],
          json_flags[span_index],
        )
      out.append((values, tail))
    return out


def convert_examples_to_features(
  examples,
  tokenizer,
  max_seq_length,
  doc_stride,
  max_query_length,
  is_training,
  output_fn,
  first_unique_id=FIRST_UNIQUE_ID,
):
  """The original's API: calls `output_fn(InputFeatures)` for every feature,
  read back from its record values and sidecar line. Returns the count."""
  encoder = FeatureEncoder(
    tokenizer, max_seq_length, doc_stride, max_query_length, is_training
  )
  unique_id = first_unique_id
  for example_index, example in enumerate(examples):
    for values, tail in encoder.encode(example, example_index):
      output_fn(
        records.read_feature(records.sidecar_line(unique_id, tail), values)
      )
      unique_id += 1
  return unique_id - first_unique_id
