"""SQuAD examples -> doc-span `InputFeatures`, exactly as the original.

Reproduces the original `convert_examples_to_features`: the query is cut to
`max_query_length` word pieces, each context word is WordPiece-tokenized on
its own (`tok_to_orig_index` / `orig_to_tok_index`), training answers are
refined by `_improve_answer_span`, the context is cut into spans of
`max_seq_length - len(query) - 3` tokens every `doc_stride` tokens, each span
becomes `[CLS] query [SEP] span [SEP]` zero-padded, and training labels point
at `[CLS]` (0, 0) when the answer is not inside the span. `unique_id` counts
from 1000000000 over the whole file.

Same output, less work: a context shared by several questions is tokenized
once (the original does it once per question), and the max-context flags of
all spans come from one pass over the tokens instead of one scan of every
span per token. `FeatureBuilder.example_spans` is the shared step; the
`InputFeatures` here and the serialized records of squad_feature_encoder
are two renderings of it.

Example:
    tokenizer = tokenization.FullTokenizer(vocab_file, do_lower_case=True)
    features = []
    convert_examples_to_features(examples, tokenizer, 384, 128, 64,
                                 is_training=False, output_fn=features.append)
"""

import collections
import functools
import itertools
import operator

from bert_tf.io_utils import InputError
from bert_tf.tokenizers import sentencepiece_tokenizer

FIRST_UNIQUE_ID = 1000000000


class InputFeatures:
  """One doc span of one example, with the original's attributes."""

  def __init__(self, unique_id, example_index, doc_span_index, tokens,
               token_to_orig_map, token_is_max_context, input_ids, input_mask,
               segment_ids, start_position=None, end_position=None,
               is_impossible=None):
    self.unique_id = unique_id
    self.example_index = example_index
    self.doc_span_index = doc_span_index
    self.tokens = tokens
    self.token_to_orig_map = token_to_orig_map
    self.token_is_max_context = token_is_max_context
    self.input_ids = input_ids
    self.input_mask = input_mask
    self.segment_ids = segment_ids
    self.start_position = start_position
    self.end_position = end_position
    self.is_impossible = is_impossible


def check_feature_settings(max_seq_length, doc_stride, max_query_length):
  """Raises InputError for settings the original rejects or loops on."""
  if max_seq_length <= max_query_length + 3:
    raise InputError(
        "The max_seq_length (%d) must be greater than max_query_length "
        "(%d) + 3" % (max_seq_length, max_query_length))
  if doc_stride < 1:
    raise InputError("--doc_stride must be at least 1, got %d" % doc_stride)
  if max_query_length < 0:
    raise InputError("--max_query_length must be >= 0, got %d" %
                     max_query_length)


class _Doc:
  """A context's word pieces, their ids and the word <-> piece maps.

  Built once per paragraph; the per-piece lists only when first used (the
  serialized path in squad_feature_encoder needs just `num_tokens`).
  """

  def __init__(self, words):
    self.words = words  # (pieces, ids) per context word
    self.counts = list(map(len, map(operator.itemgetter(0), words)))
    self.num_tokens = sum(self.counts)

  @functools.cached_property
  def tokens(self):
    return list(itertools.chain.from_iterable(
        map(operator.itemgetter(0), self.words)))

  @functools.cached_property
  def ids(self):
    return list(itertools.chain.from_iterable(
        map(operator.itemgetter(1), self.words)))

  @functools.cached_property
  def tok_to_orig_index(self):
    return list(itertools.chain.from_iterable(
        map(itertools.repeat, range(len(self.counts)), self.counts)))

  @functools.cached_property
  def orig_to_tok_index(self):
    # First piece of each word (= pieces before it).
    return list(itertools.accumulate(self.counts, initial=0))[:-1]


def improve_answer_span(doc_tokens, input_start, input_end, tokenizer,
                        orig_answer_text):
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
      if join(doc_tokens[new_start:(new_end + 1)]) == tok_answer_text:
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
  return [[best_span[p] == i for p in range(start, start + length)]
          for i, (start, length) in enumerate(spans)]


# What every feature of one example is made from. `answer` is the training
# answer's (first, last) doc piece, (-1, -1) if impossible, None if not
# training; `flags` is max_context_flags(spans).
ExampleSpans = collections.namedtuple(
    "ExampleSpans", ["query", "query_ids", "doc", "spans", "flags", "answer"])


def answer_positions(answer, start, length, doc_offset):
  """Training (start_position, end_position) in a span; (0, 0) = [CLS]."""
  tok_start, tok_end = answer
  # An impossible answer (-1, -1) is never inside a span.
  if tok_start >= start and tok_end < start + length:
    return tok_start - start + doc_offset, tok_end - start + doc_offset
  return 0, 0


class FeatureBuilder:
  """Turns one example at a time into its features (unique_id left None)."""

  def __init__(self, tokenizer, max_seq_length, doc_stride, max_query_length,
               is_training):
    check_feature_settings(max_seq_length, doc_stride, max_query_length)
    self.tokenizer = tokenizer
    self.max_seq_length = max_seq_length
    self.doc_stride = doc_stride
    self.max_query_length = max_query_length
    self.is_training = is_training
    try:
      self.cls_id, self.sep_id = tokenizer.convert_tokens_to_ids(
          ["[CLS]", "[SEP]"])
    except KeyError as e:
      raise InputError("the vocab file has no %s token" % e) from None
    self._docs = {}
    self._words = {}

  def _new_word(self, word):
    """(pieces, ids) of one context word; a word's pieces depend on it alone."""
    if len(self._words) >= 200000:
      self._words.clear()
    pieces = self.tokenizer.tokenize(word)
    entry = self._words[word] = (pieces,
                                 self.tokenizer.convert_tokens_to_ids(pieces))
    return entry

  def _doc(self, doc_tokens):
    # Keyed by identity: the examples of one paragraph share doc_tokens.
    # Holding doc_tokens in the value keeps the id from being reused.
    entry = self._docs.get(id(doc_tokens))
    if entry is None:
      if len(self._docs) >= 512:
        self._docs.clear()
      words = list(map(self._words.get, doc_tokens))
      if None in words:
        words = [w or self._new_word(doc_tokens[i])
                 for i, w in enumerate(words)]
      entry = (doc_tokens, _Doc(words))
      self._docs[id(doc_tokens)] = entry
    return entry[1]

  def _answer_span(self, example, doc):
    if example.is_impossible:
      return -1, -1
    tok_start = doc.orig_to_tok_index[example.start_position]
    if example.end_position < len(example.doc_tokens) - 1:
      tok_end = doc.orig_to_tok_index[example.end_position + 1] - 1
    else:
      tok_end = doc.num_tokens - 1
    return improve_answer_span(doc.tokens, tok_start, tok_end, self.tokenizer,
                               example.orig_answer_text)

  def example_spans(self, example):
    """The query, doc, spans and answer of `example` (an `ExampleSpans`)."""
    query = self.tokenizer.tokenize(
        example.question_text)[:self.max_query_length]
    doc = self._doc(example.doc_tokens)
    spans = doc_spans(doc.num_tokens, self.max_seq_length - len(query) - 3,
                      self.doc_stride)
    return ExampleSpans(
        query=query, query_ids=self.tokenizer.convert_tokens_to_ids(query),
        doc=doc, spans=spans, flags=max_context_flags(spans) if spans else [],
        answer=(self._answer_span(example, doc) if self.is_training else None))

  def features(self, example, example_index):
    """The InputFeatures of `example`, in doc-span order."""
    query, query_ids, doc, spans, flags, answer = self.example_spans(example)
    doc_offset = len(query) + 2
    out = []
    for span_index, (start, length) in enumerate(spans):
      end = start + length
      tokens = ["[CLS]"] + query + ["[SEP]"] + doc.tokens[start:end] + ["[SEP]"]
      positions = range(doc_offset, doc_offset + length)
      input_ids = ([self.cls_id] + query_ids + [self.sep_id] +
                   doc.ids[start:end] + [self.sep_id])
      num_pad = self.max_seq_length - len(input_ids)
      feature = InputFeatures(
          unique_id=None,
          example_index=example_index,
          doc_span_index=span_index,
          tokens=tokens,
          token_to_orig_map=dict(zip(positions, doc.tok_to_orig_index[start:end])),
          token_is_max_context=dict(zip(positions, flags[span_index])),
          input_ids=input_ids + [0] * num_pad,
          input_mask=[1] * len(input_ids) + [0] * num_pad,
          segment_ids=[0] * doc_offset + [1] * (length + 1) + [0] * num_pad,
          is_impossible=example.is_impossible)
      if self.is_training:
        feature.start_position, feature.end_position = answer_positions(
            answer, start, length, doc_offset)
      out.append(feature)
    return out


def convert_examples_to_features(examples, tokenizer, max_seq_length,
                                 doc_stride, max_query_length, is_training,
                                 output_fn, first_unique_id=FIRST_UNIQUE_ID):
  """The original's API: calls `output_fn(feature)` for every feature.

  Returns the number of features.
  """
  builder = FeatureBuilder(tokenizer, max_seq_length, doc_stride,
                           max_query_length, is_training)
  unique_id = first_unique_id
  for example_index, example in enumerate(examples):
    for feature in builder.features(example, example_index):
      feature.unique_id = unique_id
      output_fn(feature)
      unique_id += 1
  return unique_id - first_unique_id
