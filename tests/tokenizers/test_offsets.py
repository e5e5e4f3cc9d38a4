"""Token offsets: the Python tokenizers' character offsets (by hand and by
what each span normalises to), and the in-graph tokenizers' byte offsets
and ids against them on accented, CJK and emoji text."""

import random
import unicodedata

import pytest
import tensorflow as tf

from bert_tf.tokenizers.offsets import tokenize_with_offsets
from bert_tf.tokenizers.sentencepiece_tokenizer import preprocess_text
from bert_tf.tokenizers.sentencepiece_tokenizer import SentencePieceTokenizer
from bert_tf.tokenizers.tf_sentencepiece import TfSentencePiece
from bert_tf.tokenizers.tf_text_tokenizer import TfTextTokenizer
from bert_tf.tokenizers.tokenization import FullTokenizer
from tests.conftest import REPO
from tests.helpers import offset_texts
from tests.helpers.offset_texts import char_spans
from tests.helpers.offset_texts import TEXTS

_VOCAB = (
  "[PAD] [UNK] [CLS] [SEP] [MASK] caf ##e au lait , ! na ##ive re ##sum 東 : x"
).split()


@pytest.fixture(scope="module")
def hand_vocab(tmp_path_factory):
  path = tmp_path_factory.mktemp("vocab") / "vocab.txt"
  path.write_text("\n".join(_VOCAB) + "\n", encoding="utf-8")
  return str(path)


@pytest.fixture(scope="module")
def spm_file(tmp_path_factory):
  return offset_texts.sentencepiece_model(tmp_path_factory.mktemp("spm"))


def _spans(tokens):
  return [(start, end) for _, start, end in tokens]


def test_wordpiece_offsets_by_hand(hand_vocab):
  text = "Café au lait, naïve 東京 😀!"
  tokens = tokenize_with_offsets(FullTokenizer(hand_vocab, True), text)
  assert tokens == [
    ("caf", 0, 3),
    ("##e", 3, 4),  # é
    ("au", 5, 7),
    ("lait", 8, 12),
    (",", 12, 13),
    ("na", 14, 16),
    ("##ive", 16, 19),  # ïve
    ("東", 20, 21),
    ("[UNK]", 21, 22),  # 京
    ("[UNK]", 23, 24),  # 😀
    ("!", 24, 25),
  ]
  # A combining accent belongs to its letter; an unknown word is one span.
  tokens = tokenize_with_offsets(
    FullTokenizer(hand_vocab, True), "RE\u0301SUM\u00c9 xyzzy"
  )
  assert tokens == [("re", 0, 3), ("##sum", 3, 6), ("##e", 6, 7)] + [
    ("[UNK]", 8, 13)
  ]


def test_sentencepiece_offsets_by_hand(spm_file):
  tokenizer = SentencePieceTokenizer(spm_file, True)
  text = (
    "  ``Caf\u00e9''\t\tX\ufb01  RE\u0301SUME\u0301 in 1990, \u6771 \U0001f600!"
  )
  tokens = tokenize_with_offsets(tokenizer, text)
  assert [t for t, _, _ in tokens] == tokenizer.tokenize(text)

  def sources(word):
    """The sources of the pieces that end in `word`."""
    first = text.index(word)
    return [text[s:e] for _, s, e in tokens if first < e <= first + len(word)]

  assert tokens[0][1] == 2  # the leading spaces are no piece's
  assert tokens[-1] == ("!", len(text) - 1, len(text))
  # A pair of quotes is one double quote, "é" an "e".
  assert [text[s:e] for t, s, e in tokens if '"' in t] == ["``", "''"]
  assert [t for t, s, e in tokens if text[s:e] == "\u00e9"] == ["e"]
  # Pieces of one character ("fi" of the ligature) share it; a deleted
  # accent stays with its letter.
  assert set(sources("X\ufb01")) == {"X", "\ufb01"}
  assert all(not s.startswith("\u0301") for s in sources("RE\u0301SUM"))
  assert "".join(sources("RE\u0301SUME\u0301")).strip() == (
    "RE\u0301SUME\u0301"
  )
  # "1990," (a piece) is re-split: the comma keeps its own character.
  assert "".join(sources("1990,")).strip() == "1990,"
  assert sources("1990,")[-1] == ","
  assert sources("\U0001f600") == ["\U0001f600"]  # <unk>, its character


@pytest.mark.parametrize("lower", [True, False])
def test_sentencepiece_spans_spell_their_pieces(spm_file, lower):
  """Each span normalises to its piece's text (a piece of a character, the
  character: "d" of "ǅ"); spans overlap at most by a character."""
  tokenizer = SentencePieceTokenizer(spm_file, lower)
  for text in TEXTS:
    tokens = tokenize_with_offsets(tokenizer, text)
    assert [t for t, _, _ in tokens] == tokenizer.tokenize(text)
    position = 0
    for piece, start, end in tokens:
      assert position <= end and start <= end, text
      assert start >= position - 1, text  # pieces of one char share it
      spelled = unicodedata.normalize("NFKC", piece.lstrip("\u2581"))
      source = unicodedata.normalize(
        "NFKC", preprocess_text(text[start:end], lower)
      )
      if tokenizer.vocab.get(piece, 1) != 1:  # not <unk>
        assert spelled in source, (text, piece, text[start:end])
      position = end


@pytest.mark.parametrize("lower", [True, False])
def test_in_graph_wordpiece_offsets_equal_pythons(hand_vocab, lower):
  golden = str(
    REPO.parent / "shared" / "golden" / "encoder" / "vocab_small.txt"
  )
  rng = random.Random(0)
  noise = [bytes(rng.randrange(256) for _ in range(30)) for _ in range(40)]
  for vocab in (hand_vocab, golden):
    python = FullTokenizer(vocab, lower)
    in_graph = TfTextTokenizer(vocab, lower)
    texts = [t.encode("utf-8") for t in TEXTS] + noise
    ids, starts, limits = in_graph.word_pieces_with_offsets(tf.constant(texts))
    assert ids.to_list() == in_graph.word_pieces(tf.constant(texts)).to_list()
    for i, text in enumerate(texts):
      tokens = tokenize_with_offsets(python, text)
      assert ids[i].flat_values.numpy().tolist() == (
        python.convert_tokens_to_ids([t for t, _, _ in tokens])
      )
      got = char_spans(
        text, starts[i].flat_values.numpy(), limits[i].flat_values.numpy()
      )
      assert got == _spans(tokens), text


@pytest.mark.parametrize("lower", [True, False])
def test_in_graph_sentencepiece_equals_python(spm_file, lower):
  python = SentencePieceTokenizer(spm_file, lower)
  in_graph = TfSentencePiece(spm_file, lower)
  ids, starts, limits = in_graph.tokenize_with_offsets(tf.constant(TEXTS))
  assert ids.to_list() == in_graph.tokenize(tf.constant(TEXTS)).to_list()
  for i, text in enumerate(TEXTS):
    tokens = tokenize_with_offsets(python, text)
    assert ids[i].numpy().tolist() == python.convert_tokens_to_ids(
      python.tokenize(text)
    ), text
    got = char_spans(text, starts[i].numpy(), limits[i].numpy())
    assert got == _spans(tokens), text
  # The digit-comma rule ran: "1990," is a piece of the model.
  assert "1990," in python.vocab
  assert "1990," not in python.tokenize("In 1990, x")
