"""bert_tf.tokenizers.tokenization against the original code's outputs.

Golden files (tests/fixtures/tokenization) were written by the original
`tokenization.py`; the small vectors below are the original's own unit tests
and the table of reference section 3.1.
"""

import random

import pytest

from bert_tf.tokenizers import tokenization
from tests.helpers.golden_files import read_jsonl
from tests.helpers.golden_files import read_lines

TOY_VOCAB = [
  "[UNK]",
  "[CLS]",
  "[SEP]",
  "want",
  "##want",
  "##ed",
  "wa",
  "un",
  "runn",
  "##ing",
  ",",
]


def write_vocab(tmp_path, tokens, name="vocab.txt"):
  path = tmp_path / name
  path.write_text("".join(t + "\n" for t in tokens), encoding="utf-8")
  return str(path)


@pytest.fixture(scope="module")
def tok_dir(request):
  return request.config.rootpath / "tests" / "fixtures" / "tokenization"


@pytest.fixture(scope="module")
def full_vocab(request):
  return str(
    request.config.rootpath / "tests" / "fixtures" / "vocab_uncased.txt"
  )


@pytest.mark.parametrize("use_cache", [True, False])
@pytest.mark.parametrize("case", ["uncased", "cased"])
def test_edge_cases_match_original(tok_dir, full_vocab, case, use_cache):
  tokenizer = tokenization.FullTokenizer(
    full_vocab, do_lower_case=case == "uncased", use_cache=use_cache
  )
  lines = read_lines(tok_dir / "edge_cases.txt")
  expected = read_jsonl(tok_dir / ("expected_%s.jsonl" % case))
  assert len(lines) == len(expected) == 32
  for i, (line, want) in enumerate(zip(lines, expected)):
    # Twice: the second pass of the cached tokenizer is served from the cache.
    for _ in range(2):
      tokens = tokenizer.tokenize(line)
      assert tokens == want["tokens"], "line %d" % i
      assert tokenizer.convert_tokens_to_ids(tokens) == want["ids"], i
      assert tokenizer.convert_ids_to_tokens(want["ids"]) == tokens, i


@pytest.mark.parametrize("case", ["uncased", "cased"])
def test_basic_tokenizer_matches_original(tok_dir, case):
  basic = tokenization.BasicTokenizer(do_lower_case=case == "uncased")
  lines = read_lines(tok_dir / "edge_cases.txt")
  expected = read_jsonl(tok_dir / ("basic_%s.jsonl" % case))
  assert len(lines) == len(expected)
  for i, (line, want) in enumerate(zip(lines, expected)):
    assert basic.tokenize(line) == want["tokens"], "line %d" % i


@pytest.mark.parametrize("use_cache", [True, False])
def test_corpus_sample_matches_original(tok_dir, full_vocab, use_cache):
  tokenizer = tokenization.FullTokenizer(
    full_vocab, do_lower_case=True, use_cache=use_cache
  )
  lines = read_lines(tok_dir / "corpus_sample.txt.gz")
  expected = read_jsonl(tok_dir / "corpus_sample_expected_uncased.jsonl.gz")
  assert len(lines) == len(expected) == 2000
  assert sum(len(e["tokens"]) for e in expected) == 58972
  for i, (line, want) in enumerate(zip(lines, expected)):
    tokens = tokenizer.tokenize(line)
    assert tokens == want["tokens"], "line %d" % i
    assert tokenizer.convert_tokens_to_ids(tokens) == want["ids"], i


def test_bytes_input_is_decoded_dropping_bad_bytes(full_vocab):
  tokenizer = tokenization.FullTokenizer(full_vocab)
  assert tokenizer.tokenize(b"caf\xc3\xa9 \xff bar") == ["cafe", "bar"]
  with pytest.raises(ValueError):
    tokenizer.tokenize(123)


@pytest.mark.parametrize(
  "lower,expected",
  [(True, "hello ! how are you ?"), (False, "HeLLo ! how Are yoU ?")],
)
def test_basic_tokenizer_reference_vector(lower, expected):
  basic = tokenization.BasicTokenizer(do_lower_case=lower)
  assert basic.tokenize(" \tHeLLo!how  \n Are yoU?  ") == expected.split()


@pytest.mark.parametrize(
  "text,uncased,cased",
  [
    ("H\u00e9llo", "hello", "H\u00e9llo"),
    ("ah\u535a\u63a8zz", "ah \u535a \u63a8 zz", "ah \u535a \u63a8 zz"),
    (
      "John Johanson's, $5.00 (1895-1943).",
      "john johanson ' s , $ 5 . 00 ( 1895 - 1943 ) .",
      "John Johanson ' s , $ 5 . 00 ( 1895 - 1943 ) .",
    ),
    (
      "caf\u00e9 na\u00efve \u00c5ngstr\u00f6m",
      "cafe naive angstrom",
      "caf\u00e9 na\u00efve \u00c5ngstr\u00f6m",
    ),
    ("a\u00a0b\u200bc\ufffdd\x00e", "a bcde", "a bcde"),
    ("emoji \U0001f600!", "emoji \U0001f600 !", "emoji \U0001f600 !"),
    ("x^2 `code` ~tilde", "x ^ 2 ` code ` ~ tilde", "x ^ 2 ` code ` ~ tilde"),
    ("[MASK] don't", "[ mask ] don ' t", "[ MASK ] don ' t"),
    (
      "\ud55c \u30d1\u30f3\u30c0",
      "\u1112\u1161\u11ab \u30cf\u30f3\u30bf",
      "\ud55c \u30d1\u30f3\u30c0",
    ),
  ],
)
def test_basic_tokenizer_reference_table(text, uncased, cased):
  for lower, expected in ((True, uncased), (False, cased)):
    basic = tokenization.BasicTokenizer(do_lower_case=lower)
    assert basic.tokenize(text) == expected.split(), (text, lower)


def test_wordpiece_reference_vectors(tmp_path):
  vocab = tokenization.load_vocab(write_vocab(tmp_path, TOY_VOCAB))
  wordpiece = tokenization.WordpieceTokenizer(vocab=vocab)
  assert wordpiece.tokenize("") == []
  assert wordpiece.tokenize("unwanted running") == [
    "un",
    "##want",
    "##ed",
    "runn",
    "##ing",
  ]
  assert wordpiece.tokenize("unwantedX running") == ["[UNK]", "runn", "##ing"]
  assert wordpiece.tokenize("un" * 100) == ["[UNK]"]  # 200 chars: matched
  assert wordpiece.tokenize("un" * 100 + "x") == ["[UNK]"]  # 201: too long
  long_word = "un" + "want" * 49 + "ed"  # exactly 200 characters
  assert len(long_word) == 200
  assert wordpiece.tokenize(long_word) == (["un"] + ["##want"] * 49 + ["##ed"])
  assert wordpiece.tokenize(long_word + "ed") == ["[UNK]"]


@pytest.mark.parametrize("use_cache", [True, False])
def test_full_tokenizer_reference_vector(tmp_path, use_cache):
  tokenizer = tokenization.FullTokenizer(
    write_vocab(tmp_path, TOY_VOCAB), use_cache=use_cache
  )
  tokens = tokenizer.tokenize("UNwant\u00e9d,running")
  assert tokens == ["un", "##want", "##ed", ",", "runn", "##ing"]
  assert tokenizer.convert_tokens_to_ids(tokens) == [7, 4, 5, 10, 8, 9]
  assert tokenizer.convert_ids_to_tokens([7, 4, 5, 10, 8, 9]) == tokens


def test_convert_tokens_to_ids_raises_on_unknown(tmp_path):
  tokenizer = tokenization.FullTokenizer(write_vocab(tmp_path, TOY_VOCAB))
  with pytest.raises(KeyError):
    tokenizer.convert_tokens_to_ids(["want", "wanted"])
  with pytest.raises(KeyError):
    tokenizer.convert_ids_to_tokens([len(TOY_VOCAB)])


def test_load_vocab_quirks(tmp_path):
  path = tmp_path / "vocab.txt"
  # "\n"-only splitting (U+2028 and \r stay in the line, then strip() removes
  # the \r), stripped lines, a duplicate keeps its last id, and a blank line
  # is the token "".
  path.write_bytes("[PAD]\n a \r\nb\u2028c\nx\n\n[PAD]\nlast".encode())
  vocab = tokenization.load_vocab(str(path))
  assert vocab == {"[PAD]": 5, "a": 1, "b\u2028c": 2, "x": 3, "": 4, "last": 6}
  assert list(vocab)[:2] == ["[PAD]", "a"]  # first insertion order kept
  path.write_bytes(b"a\nb\n")
  assert tokenization.load_vocab(str(path)) == {"a": 0, "b": 1}


def test_load_vocab_full_file(full_vocab):
  vocab = tokenization.load_vocab(full_vocab)
  assert len(vocab) == 30522
  assert [vocab[t] for t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")] == [
    0,
    100,
    101,
    102,
    103,
  ]


@pytest.mark.parametrize(
  "lower,ckpt",
  [
    (False, "/m/uncased_L-12_H-768_A-12/bert_model.ckpt"),
    (False, "gs://b/uncased_L-24_H-1024_A-16/bert_model.ckpt"),
    (False, "multilingual_L-12_H-768_A-12/bert_model.ckpt"),
    (False, "x/chinese_L-12_H-768_A-12/bert_model.ckpt-100"),
    (True, "/m/cased_L-12_H-768_A-12/bert_model.ckpt"),
    (True, "/m/cased_L-24_H-1024_A-16/bert_model.ckpt"),
    (True, "/m/multi_cased_L-12_H-768_A-12/bert_model.ckpt"),
    # The lazy prefix stops at the first [A-Za-z0-9_-] run that reaches
    # "/bert_model.ckpt", so a '.' in the folder name is skipped over.
    (True, "/m/my.cased_L-12_H-768_A-12/bert_model.ckpt"),
  ],
)
def test_validate_case_rejects_mismatch(lower, ckpt):
  with pytest.raises(ValueError, match="do_lower_case=%s" % lower):
    tokenization.validate_case_matches_checkpoint(lower, ckpt)


@pytest.mark.parametrize(
  "lower,ckpt",
  [
    (True, "/m/uncased_L-12_H-768_A-12/bert_model.ckpt"),
    (False, "/m/cased_L-12_H-768_A-12/bert_model.ckpt"),
    (False, "/m/wwm_uncased_L-24_H-1024_A-16/bert_model.ckpt"),
    (True, "/m/wwm_cased_L-24_H-1024_A-16/bert_model.ckpt"),
    (False, "/m/uncased_L-12_H-768_A-12/model.ckpt"),  # no bert_model.ckpt
    (True, "/m/xcased_L-12_H-768_A-12/bert_model.ckpt"),
    (False, ""),
    (False, None),
  ],
)
def test_validate_case_accepts(lower, ckpt):
  tokenization.validate_case_matches_checkpoint(lower, ckpt)


@pytest.mark.parametrize("lower", [True, False])
def test_cached_path_equals_original_algorithm_on_random_text(
  full_vocab, lower
):
  # The cached path cleans with str.translate and splits ASCII words with a
  # regex; use_cache=False is the original code path, line for line.
  pool = (
    "aZ09 ,.'$-_`~|[]\t\n\r\x00\x07\x0b\x1c\x7f\x85\xa0\xad\u200b"
    "\u200d\u2028\u3000\ufeff\ufffd\u00e9e\u0301\u00df\u0130\u03a3"
    "\u4e2d\uf900\U00020000\u3072\ud55c\u0e20\U0001f600\ue000\u2014"
  )
  rng = random.Random(0)
  original = tokenization.FullTokenizer(full_vocab, lower, use_cache=False)
  cached = tokenization.FullTokenizer(full_vocab, lower)
  for _ in range(3000):
    text = "".join(rng.choice(pool) for _ in range(rng.randint(0, 30)))
    assert cached.tokenize(text) == original.tokenize(text), ascii(text)
