"""Texts for offsets tests (accented, CJK, emoji, and the normalisation's
edge cases), a SentencePiece model that splits them in every way, and byte
offsets turned into character offsets.

Example:
    model_file = sentencepiece_model(tmp_path)
    chars = char_spans(text, byte_starts, byte_limits)
"""

import gzip
import pathlib

from tests.helpers.sentencepiece_model import train_model

_CORPUS = (
  pathlib.Path(__file__).parents[1]
  / "fixtures"
  / "tokenization"
  / "corpus_sample.txt.gz"
)

ACCENTED = [
  "Café au lait, naïve résumé!",
  "RÉSUMÉ of Zürich; A\u0301ngstro\u0308m",  # combining marks
  "ΟΔΟΣ Σ ΣΟΦΟΣ",  # a final sigma when lower-cased
  "İstanbul ẞ Ⱥ ǅ \ufb01ne ①",  # case maps that change length; NFKD
]
CJK = [
  "東京タワー 中文文本，韓國語：한국어 텍스트",
  "日本語のテキスト。",
]
EMOJI = [
  "I \u2764\ufe0f it 😀👍🏽",
  "family: 👨\u200d👩\u200d👧 flags 🇯🇵!",
]
EDGE = [
  "",
  "   ",
  "  two\t\tspaces\u00a0and\u2028lines  ",
  "``quoted'' and ```three''' `",
  "In 1990, 2,000, 1990,5 and ۱۲, x",
  "zero\u200bwidth \x00nul \x1cfs \x85nel",
  "x" * 210 + " long",
]
TEXTS = ACCENTED + CJK + EMOJI + EDGE


def sentencepiece_model(folder, vocab_size=400):
  """A unigram model on the fixture corpus, the accented and CJK texts (not
  the emoji: they stay <unk>) and "1990," (a piece ALBERT's digit-comma
  rule re-splits)."""
  with gzip.open(_CORPUS, "rb") as f:
    lines = f.read().decode("utf-8").split("\n")[:300]
  lines += ["In 1990, team %d won." % i for i in range(30)]
  return train_model(
    folder, lines + ACCENTED + CJK, vocab_size, symbols=["1990,"]
  )


def char_spans(text, starts, limits):
  """UTF-8 byte offsets into `text` (bytes not UTF-8 count as none) ->
  [(start, end)] character offsets into its decoded text."""
  raw = text if isinstance(text, bytes) else text.encode("utf-8")
  chars = lambda b: len(raw[:b].decode("utf-8", "ignore"))  # noqa: E731
  return [(chars(s), chars(e)) for s, e in zip(starts, limits)]
