"""TfTextTokenizer (in-graph) against the original tokenizer's ids."""

import unicodedata

import pytest
import tensorflow as tf

from bert_tf.tokenizers import tokenization
from bert_tf.tokenizers.tf_text_tokenizer import pack_inputs
from bert_tf.tokenizers.tf_text_tokenizer import TfTextTokenizer
from tests.helpers.golden_files import read_jsonl
from tests.helpers.golden_files import read_lines

SQUAD_LIKE = [
  "Which NFL team represented the AFC at Super Bowl 50?",
  "The Broncos defeated the Carolina Panthers 24\u201310 on February 7, "
  "2016, at Levi's Stadium in Santa Clara, California.",
  "What was the name of the Polish king who moved the capital to Warsaw "
  "in 1596?",
  "Nikola Tesla (Serbian Cyrillic: \u041d\u0438\u043a\u043e\u043b\u0430 "
  "\u0422\u0435\u0441\u043b\u0430; 10 July 1856 \u2013 7 January 1943) "
  "was a Serbian-American inventor.",
  "The Yuan dynasty (\u5143\u671d; Y\u00e1ng Ch\u00e1o) was founded by "
  "Kublai Khan \u2014 grandson of Genghis Khan.",
  "How much did the project cost in US$ (approx. $1.3 billion)?",
  "Amazonia's rainforest covers 5,500,000 km\u00b2 (2,100,000 sq mi).",
  "Fr\u00e9d\u00e9ric Chopin's \u00c9tudes, Op. 10, were \"revolutionary\""
  " according to critics \u2018at the time\u2019.",
  "The oxygen\u2013hemoglobin curve: O\u2082 binds Fe\u00b2\u207a ions.",
  "Who coined the term \u201cpharmacy\u201d in the 17th century?",
  "ABC's Monday Night Football aired 1970\u20132005 (35 seasons).",
  "In Stra\u00dfburg, na\u00efve caf\u00e9 owners served cr\u00e8me "
  "br\u00fbl\u00e9e; Z\u00fcrich's didn't.",
  "Genghis Khan united the Mongol tribes c.\u00a01206 CE.",
  "The Rhine\u200b\u2013Meuse delta is the Netherlands' largest.",
  "",
]


@pytest.fixture(scope="module")
def tok_dir(request):
  return request.config.rootpath / "tests" / "fixtures" / "tokenization"


@pytest.fixture(scope="module", params=[True, False], ids=["uncased", "cased"])
def tokenizers(request):
  vocab = str(request.config.rootpath / "tests/fixtures/vocab_uncased.txt")
  lower = request.param
  return (
    TfTextTokenizer(vocab, do_lower_case=lower),
    tokenization.FullTokenizer(vocab, do_lower_case=lower),
    lower,
  )


def graph_ids(tokenizer, texts):
  return tokenizer(tf.constant(texts)).to_list()


def python_ids(tokenizer, texts):
  return [tokenizer.convert_tokens_to_ids(tokenizer.tokenize(t)) for t in texts]


def test_edge_cases_match_golden(tokenizers, tok_dir):
  graph, _, lower = tokenizers
  expected = [
    e["ids"]
    for e in read_jsonl(
      tok_dir / ("expected_%s.jsonl" % ("uncased" if lower else "cased"))
    )
  ]
  got = graph_ids(graph, read_lines(tok_dir / "edge_cases.txt"))
  assert len(got) == 32
  for i, (g, e) in enumerate(zip(got, expected)):
    assert g == e, "line %d" % i


def test_corpus_sample_matches(tokenizers, tok_dir):
  graph, python, lower = tokenizers
  lines = read_lines(tok_dir / "corpus_sample.txt.gz")
  if lower:  # golden ids of the original code
    expected = [
      e["ids"]
      for e in read_jsonl(tok_dir / "corpus_sample_expected_uncased.jsonl.gz")
    ]
  else:
    expected = python_ids(python, lines)
  assert graph_ids(graph, lines) == expected


def test_squad_like_and_long_words_match(tokenizers):
  graph, python, _ = tokenizers
  texts = SQUAD_LIKE + [
    "a" * 200,
    "b" * 201 + ", ok",
    "\u03bf" * 150,
    "\u03bf" * 201,
    "x " + "\u041e" * 120 + ".",
    "\ud55c" * 80,
    "\u00e9" * 199 + "\u0301",
    "\u039f\u0394\u039f\u03a3 \u0391\u03a3.",
  ]  # final sigma
  assert graph_ids(graph, texts) == python_ids(python, texts)


def test_invalid_utf8_bytes_are_dropped(tokenizers):
  graph, python, _ = tokenizers
  texts = [
    b"caf\xc3\xa9 \xff bar",
    b"ab\xc3(cd",
    b"x\xed\xa0\x80y",
    b"\xe2\x82 z",
    b"q\xf0\x9f\x98",
    b"a\xc0\x80b",
  ]
  assert graph_ids(graph, texts) == python_ids(python, texts)


@pytest.mark.parametrize(
  "cp,differs_when_cased", [(0x0ECE, False), (0x11F43, True), (0x13439, True)]
)
def test_documented_unicode_version_disagreements(
  tokenizers, cp, differs_when_cased
):
  graph, python, lower = tokenizers
  assert unicodedata.category(chr(cp)) == "Cn"  # unassigned in Python 3.11
  text = "x%sy %s z" % (chr(cp), chr(cp))
  agree = graph_ids(graph, [text]) == python_ids(python, [text])
  assert agree == (not lower and not differs_when_cased)


def original_features(ids_a, ids_b, max_seq_length):
  """The original convert_single_example's packing, restated."""
  ids_a, ids_b = list(ids_a), list(ids_b)
  if ids_b:
    while len(ids_a) + len(ids_b) > max_seq_length - 3:
      (ids_a if len(ids_a) > len(ids_b) else ids_b).pop()
  else:
    ids_a = ids_a[: max_seq_length - 2]
  ids = [101] + ids_a + [102]
  segments = [0] * len(ids)
  if ids_b:
    ids += ids_b + [102]
    segments += [1] * (len(ids_b) + 1)
  pad = [0] * (max_seq_length - len(ids))
  return {
    "input_ids": ids + pad,
    "input_mask": [1] * len(ids) + pad,
    "segment_ids": segments + pad,
  }


def test_pack_inputs_truncates_like_the_original():
  for max_seq_length in (3, 4, 5, 8, 11, 16):
    pairs = [(la, lb) for la in range(15) for lb in range(15)]
    a = tf.ragged.constant(
      [[1000 + i for i in range(la)] for la, _ in pairs],
      dtype=tf.int32,
      ragged_rank=1,
    )
    b = tf.ragged.constant(
      [[2000 + i for i in range(lb)] for _, lb in pairs],
      dtype=tf.int32,
      ragged_rank=1,
    )
    got = pack_inputs([a, b], max_seq_length, 101, 102)
    single = pack_inputs([a], max_seq_length, 101, 102)
    for row, (la, lb) in enumerate(pairs):
      want = original_features(
        range(1000, 1000 + la), range(2000, 2000 + lb), max_seq_length
      )
      for key in want:
        assert got[key][row].numpy().tolist() == want[key], (key, la, lb)
      want = original_features(range(1000, 1000 + la), [], max_seq_length)
      assert single["input_ids"][row].numpy().tolist() == want["input_ids"]


@pytest.mark.parametrize("splits", [tf.int64, tf.int32])
def test_pack_layout_by_hand(splits):
  a = tf.ragged.constant([[5, 6, 7]], tf.int32, row_splits_dtype=splits)
  b = tf.ragged.constant([[8, 9]], tf.int32, row_splits_dtype=splits)
  got = {
    k: v.numpy().tolist()[0]
    for k, v in pack_inputs([a, b], 10, 101, 102).items()
  }
  assert got == {
    "input_ids": [101, 5, 6, 7, 102, 8, 9, 102, 0, 0],
    "input_mask": [1, 1, 1, 1, 1, 1, 1, 1, 0, 0],
    "segment_ids": [0, 0, 0, 0, 0, 1, 1, 1, 0, 0],
  }
  with pytest.raises(ValueError):
    pack_inputs([a, b, a], 10, 101, 102)


class _Serving(tf.Module):
  """Raw question/context strings in, BERT features out."""

  def __init__(self, tokenizer):
    super().__init__()
    self.tokenizer = tokenizer

  @tf.function(input_signature=[tf.TensorSpec([None], tf.string)] * 2)
  def features(self, questions, contexts):
    return self.tokenizer.pack(
      [self.tokenizer(questions), self.tokenizer(contexts)], 24
    )


@pytest.mark.process
def test_saved_model_and_tf_data_take_raw_text(tmp_path, request):
  # A 5000-token prefix of the vocab keeps the SavedModel small and quick.
  full = request.config.rootpath / "tests/fixtures/vocab_uncased.txt"
  vocab = str(tmp_path / "vocab.txt")
  with open(full, "rb") as f_in, open(vocab, "wb") as f_out:
    f_out.write(b"".join(f_in.readlines()[:5000]))
  python = tokenization.FullTokenizer(vocab, do_lower_case=True)
  questions, contexts = SQUAD_LIKE[0:6:2], SQUAD_LIKE[1:7:2]
  want = [
    original_features(*python_ids(python, [q, c]), 24)
    for q, c in zip(questions, contexts)
  ]

  export_dir = str(tmp_path / "serving")
  tf.saved_model.save(_Serving(TfTextTokenizer(vocab)), export_dir)
  loaded = tf.saved_model.load(export_dir)
  got = loaded.features(tf.constant(questions), tf.constant(contexts))
  dataset = tf.data.Dataset.from_tensor_slices((questions, contexts)).batch(2)
  dataset = dataset.map(loaded.features)  # the exported graph, in tf.data
  from_data = {
    k: tf.concat([batch[k] for batch in dataset], 0) for k in want[0]
  }
  for key in want[0]:
    expected = [w[key] for w in want]
    assert got[key].numpy().tolist() == expected, key
    assert from_data[key].numpy().tolist() == expected, key
