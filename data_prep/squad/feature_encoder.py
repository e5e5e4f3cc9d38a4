"""SQuAD examples -> serialized features, without building InputFeatures.

The fast path of `squad_writer`: the same features as
`FeatureBuilder.features` + `squad_records.feature_entries` /
the sidecar's `json.dumps`, byte for byte, but each paragraph's word pieces
are serialized once (varint ids, JSON token strings, JSON word indices) and
every doc span then takes slices of those strings instead of encoding its
~400 tokens one by one. Padding, masks and segment ids depend only on the
query and span lengths, so their bytes are cached.

Example:
    encoder = FeatureEncoder(builder, with_sidecar=True)
    for entries, tail in encoder(first_index, examples):
      record = squad_records.example_bytes(unique_id, entries)
      line = squad_records.sidecar_line(unique_id, tail)
"""

import functools
import itertools
import json
import operator

from data_prep.squad import records as squad_records
from bert_tf.records import example_bytes as teb
from data_prep.squad.features import answer_positions


class _Memo(dict):
  """A dict that fills a missing key with `fn(key)`.

  `map(memo.__getitem__, keys)` then encodes a whole list at C speed.
  """

  def __init__(self, fn):
    super().__init__()
    self._fn = fn

  def __missing__(self, key):
    value = self[key] = self._fn(key)
    return value


_ID_VARINT = _Memo(teb.varint)
# JSON list items with their separator, as json.dumps writes them.
_TOKEN_ITEM = _Memo(lambda token: json.dumps(token) + ", ")
_INDEX_ITEM = _Memo("%d, ".__mod__)

# The sidecar line after `{"unique_id": N, ` (keys in json.dumps order).
_TAIL = ('"example_index": %d, "doc_span_index": %d, "qas_id": %s, '
         '"tokens": ["[CLS]", %s"[SEP]", %s"[SEP]"], "doc_offset": %d, '
         '"token_to_orig_map": [%s], "token_is_max_context": %s}')


def _offsets(items):
  """Start offset of every item and of the end, in their concatenation."""
  return list(itertools.accumulate(map(len, items), initial=0))


class _EncodedDoc:
  """A doc's pieces serialized once; a span's encodings are slices."""

  def __init__(self, doc, word_codes):
    self.doc = doc
    self.ids = b"".join(map(operator.itemgetter(0), word_codes))
    self.tokens = "".join(map(operator.itemgetter(1), word_codes))
    self.origs = "".join(map(operator.mul, map(
        _INDEX_ITEM.__getitem__, range(len(word_codes))), doc.counts))

  @functools.cached_property
  def _piece_offsets(self):
    doc = self.doc
    return (_offsets(map(_ID_VARINT.__getitem__, doc.ids)),
            _offsets(map(_TOKEN_ITEM.__getitem__, doc.tokens)),
            _offsets(map(_INDEX_ITEM.__getitem__, doc.tok_to_orig_index)))

  def span(self, start, end):
    """(varint ids, JSON tokens, JSON word indices) of pieces [start, end),
    each JSON item followed by ", "."""
    if start == 0 and end == self.doc.num_tokens:  # most spans
      return self.ids, self.tokens, self.origs
    ids, tokens, origs = self._piece_offsets
    return (self.ids[ids[start]:ids[end]],
            self.tokens[tokens[start]:tokens[end]],
            self.origs[origs[start]:origs[end]])


@functools.lru_cache(maxsize=None)
def _mask_and_segment_entries(doc_offset, length, max_seq_length):
  num_real = doc_offset + length + 1
  pad = bytes(max_seq_length - num_real)
  return (teb.int64_entry("input_mask", b"\x01" * num_real + pad) +
          teb.int64_entry("segment_ids",
                          bytes(doc_offset) + b"\x01" * (length + 1) + pad))


@functools.lru_cache(maxsize=None)
def _all_true(length):
  return "[" + ", ".join(["true"] * length) + "]"


class FeatureEncoder:
  """Examples -> [(TFRecord entries without unique_ids, sidecar tail)]."""

  def __init__(self, builder, with_sidecar):
    self.builder = builder
    self.with_sidecar = with_sidecar
    self.cls = _ID_VARINT[builder.cls_id]
    self.sep = _ID_VARINT[builder.sep_id]
    self._encoded = None  # the last doc: a paragraph's questions are adjacent
    self._word_codes = {}  # word -> (varint ids, JSON tokens) of its pieces

  def _new_word_codes(self, word, pieces, ids):
    if len(self._word_codes) >= 200000:
      self._word_codes.clear()
    codes = self._word_codes[word] = (
        b"".join(map(_ID_VARINT.__getitem__, ids)),
        "".join(map(_TOKEN_ITEM.__getitem__, pieces)))
    return codes

  def _encoded_doc(self, doc, doc_tokens):
    if self._encoded is None or self._encoded.doc is not doc:
      codes = list(map(self._word_codes.get, doc_tokens))
      if None in codes:
        codes = [c or self._new_word_codes(word, *pieces_and_ids)
                 for c, word, pieces_and_ids in zip(codes, doc_tokens,
                                                    doc.words)]
      self._encoded = _EncodedDoc(doc, codes)
    return self._encoded

  def __call__(self, first_index, examples):
    out = []
    for offset, example in enumerate(examples):
      out += self.encode(example, first_index + offset)
    return out

  def encode(self, example, example_index):
    """The (entries, tail) of every feature of `example`, in span order."""
    builder = self.builder
    query, query_ids, doc, spans, flags, answer = builder.example_spans(example)
    enc = self._encoded_doc(doc, example.doc_tokens)
    doc_offset = len(query) + 2
    ids_head = (self.cls + b"".join(map(_ID_VARINT.__getitem__, query_ids)) +
                self.sep)
    query_json = "".join(map(_TOKEN_ITEM.__getitem__, query))
    qas_id = json.dumps(example.qas_id)
    out = []
    for span_index, (start, length) in enumerate(spans):
      span_ids, span_tokens, span_origs = enc.span(start, start + length)
      num_pad = builder.max_seq_length - doc_offset - length - 1
      input_ids = ids_head + span_ids + self.sep + bytes(num_pad)
      entries = (teb.int64_entry("input_ids", input_ids) +
                 _mask_and_segment_entries(doc_offset, length,
                                           builder.max_seq_length))
      if builder.is_training:
        entries += squad_records.label_entries(
            *answer_positions(answer, start, length, doc_offset),
            example.is_impossible)
      tail = None
      if self.with_sidecar:
        is_max = (_all_true(length) if len(spans) == 1 else
                  json.dumps(flags[span_index]))
        tail = _TAIL % (example_index, span_index, qas_id, query_json,
                        span_tokens, doc_offset, span_origs[:-2], is_max)
      out.append((entries, tail))
    return out
