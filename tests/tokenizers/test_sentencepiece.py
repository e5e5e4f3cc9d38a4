"""SentencePieceTokenizer on a tiny model trained here (well under a second)."""

import gzip

import pytest
import sentencepiece as spm

from bert_tf.tokenizers.sentencepiece_tokenizer import preprocess_text
from bert_tf.tokenizers.sentencepiece_tokenizer import SentencePieceTokenizer

SPECIALS = ["[CLS]", "[SEP]", "[MASK]"]


@pytest.fixture(scope="module")
def model_file(request, tmp_path_factory):
  corpus = (
    request.config.rootpath
    / "tests"
    / "fixtures"
    / "tokenization"
    / "corpus_sample.txt.gz"
  )
  with gzip.open(corpus, "rb") as f:
    lines = f.read().decode("utf-8").split("\n")[:300]
  lines += ["In 1990, team %d won." % i for i in range(50)]
  tmp = tmp_path_factory.mktemp("spm")
  (tmp / "corpus.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
  # ALBERT's layout: <pad>=0, <unk>=1, then the BERT specials. "1990," is
  # forced to be a piece so that the digit-comma re-split is exercised.
  spm.SentencePieceTrainer.train(
    input=str(tmp / "corpus.txt"),
    model_prefix=str(tmp / "m"),
    vocab_size=400,
    model_type="unigram",
    pad_id=0,
    unk_id=1,
    bos_id=-1,
    eos_id=-1,
    user_defined_symbols=SPECIALS + ["1990,"],
    character_coverage=1.0,
    num_threads=1,
    minloglevel=2,
  )
  return str(tmp / "m.model")


def test_preprocess_text():
  text = "  Caf\u00e9\t ``Quoted''  \ufb01ne  "
  assert preprocess_text(text, True) == 'cafe "quoted" fine'
  assert preprocess_text(text, False) == 'Cafe "Quoted" fine'
  assert preprocess_text(b"A\xc3\xa9", True) == "ae"


def test_vocab_and_special_ids(model_file):
  tokenizer = SentencePieceTokenizer(model_file, do_lower_case=True)
  assert len(tokenizer.vocab) == 400
  assert tokenizer.convert_tokens_to_ids(["<pad>", "<unk>"] + SPECIALS) == [
    0,
    1,
    2,
    3,
    4,
  ]
  assert all(tokenizer.inv_vocab[i] == p for p, i in tokenizer.vocab.items())
  # Unknown pieces map to <unk> (ALBERT's PieceToId), no KeyError.
  assert tokenizer.convert_tokens_to_ids(["not-a-piece"]) == [1]


@pytest.mark.parametrize("lower", [True, False])
def test_pieces_reassemble_preprocessed_text(model_file, lower):
  tokenizer = SentencePieceTokenizer(model_file, do_lower_case=lower)
  text = "The QUICK brown fox, jumped over 3 lazy dogs in Z\u00fcrich."
  tokens = tokenizer.tokenize(text)
  rebuilt = "".join(tokens).replace("\u2581", " ").strip()
  assert rebuilt == preprocess_text(text, lower)
  assert (rebuilt == rebuilt.lower()) == lower
  ids = tokenizer.convert_tokens_to_ids(tokens)
  assert ids == tokenizer.sp_model.EncodeAsIds(preprocess_text(text, lower))
  assert tokenizer.convert_ids_to_tokens(ids) == tokens


def test_digit_comma_is_split_off(model_file):
  tokenizer = SentencePieceTokenizer(model_file, do_lower_case=True)
  assert tokenizer.sp_model.EncodeAsPieces("in 1990, the")[2] == "1990,"
  digits = tokenizer.sp_model.EncodeAsPieces("1990")
  assert digits[0].startswith("\u2581")
  # The re-encoded digits lose the boundary marker "1990," did not have.
  digits = ([digits[0][1:]] if len(digits[0]) > 1 else []) + digits[1:]
  assert tokenizer.tokenize("In 1990, the") == (
    ["\u2581in", "\u2581"] + digits + [","] + ["\u2581the"]
  )
