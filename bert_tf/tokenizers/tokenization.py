"""WordPiece tokenization, output-identical to the original `tokenization.py`.

The public API mirrors the original module (`FullTokenizer`, `BasicTokenizer`,
`WordpieceTokenizer`, `load_vocab`, `convert_to_unicode`, `printable_text`,
`whitespace_tokenize`, `validate_case_matches_checkpoint`), quirks included:
Cc/Cf characters are deleted, Zs characters become spaces, CJK ideographs are
spaced out, accents are stripped (NFD, drop Mn) only when lower casing, every
ASCII symbol and Unicode P* character is split off, and words over 200
characters become `[UNK]`.

The only addition is a per-word cache: the basic tokenizer's output for a
whitespace-separated word, and its WordPiece pieces, depend on that word
alone, so repeated words cost one dict lookup. The cached path also cleans
text with one `str.translate` table built from the original predicates, and
splits ASCII words on punctuation with a regex; both give the same output.

Example:
    tokenizer = FullTokenizer("vocab.txt", do_lower_case=True)
    tokens = tokenizer.tokenize("UNwant\u00e9d,running")
    ids = tokenizer.convert_tokens_to_ids(tokens)
"""

import collections
import re
import unicodedata

from absl import logging

from bert_tf.io_utils import decode_text
from bert_tf.io_utils import InputError

_CASED_MODELS = (
  "cased_L-12_H-768_A-12",
  "cased_L-24_H-1024_A-16",
  "multi_cased_L-12_H-768_A-12",
)
_UNCASED_MODELS = (
  "uncased_L-24_H-1024_A-16",
  "uncased_L-12_H-768_A-12",
  "multilingual_L-12_H-768_A-12",
  "chinese_L-12_H-768_A-12",
)


def validate_case_matches_checkpoint(do_lower_case, init_checkpoint):
  """Raises ValueError when `do_lower_case` contradicts a known Google model."""
  if not init_checkpoint:
    return
  m = re.match("^.*?([A-Za-z0-9_-]+)/bert_model.ckpt", init_checkpoint)
  if m is None:
    return
  model_name = m.group(1)
  if model_name in _UNCASED_MODELS and not do_lower_case:
    actual_flag, case_name, opposite_flag = "False", "uncased", "True"
  elif model_name in _CASED_MODELS and do_lower_case:
    actual_flag, case_name, opposite_flag = "True", "cased", "False"
  else:
    return
  raise ValueError(
    "You passed in `--do_lower_case=%s` with `--init_checkpoint=%s`. "
    "However, `%s` seems to be a %s model, so you should pass in "
    "`--do_lower_case=%s` so that the fine-tuning matches how the model was "
    "pre-training. If this error is wrong, please just comment out this "
    "check."
    % (actual_flag, init_checkpoint, model_name, case_name, opposite_flag)
  )


def convert_to_unicode(text):
  """Returns `text` as str; bytes are decoded as UTF-8, dropping bad bytes."""
  if isinstance(text, str):
    return text
  if isinstance(text, bytes):
    return text.decode("utf-8", "ignore")
  raise ValueError("Unsupported string type: %s" % (type(text)))


# Python 3 has one string type, so the original's printable_text is the same.
printable_text = convert_to_unicode


def load_vocab(vocab_file):
  """Loads a vocabulary file: one token per line, id = line index.

  Lines are split on "\n" only (as TF1's GFile.readline did) and stripped; a
  duplicated token keeps the id of its last line, like the original.
  """
  with open(vocab_file, "rb") as f:
    lines = decode_text(f.read(), vocab_file).split("\n")
  if lines and lines[-1] == "":
    lines.pop()
  vocab = collections.OrderedDict()
  for index, line in enumerate(lines):
    vocab[line.strip()] = index
  return vocab


def convert_by_vocab(vocab, items):
  """Maps each item through `vocab`; an unknown item raises KeyError."""
  return [vocab[item] for item in items]


def convert_tokens_to_ids(vocab, tokens):
  return convert_by_vocab(vocab, tokens)


def convert_ids_to_tokens(inv_vocab, ids):
  return convert_by_vocab(inv_vocab, ids)


def whitespace_tokenize(text):
  """Strips and splits on Python whitespace."""
  text = text.strip()
  if not text:
    return []
  return text.split()


_ASCII_SPLIT = re.compile(r"[0-9A-Za-z]+|[^0-9A-Za-z]")


class FullTokenizer:
  """Basic tokenization followed by WordPiece, with a per-word cache.

  `use_cache=False` runs the original algorithm unchanged (for benchmarks).
  """

  def __init__(self, vocab_file, do_lower_case=True, use_cache=True):
    self.vocab = load_vocab(vocab_file)
    _check_vocab(self.vocab, vocab_file, do_lower_case)
    self._unk_watch = _UnkWatch(vocab_file)
    self.inv_vocab = {v: k for k, v in self.vocab.items()}
    self.do_lower_case = do_lower_case
    self.basic_tokenizer = BasicTokenizer(do_lower_case=do_lower_case)
    self.wordpiece_tokenizer = WordpieceTokenizer(vocab=self.vocab)
    self.use_cache = use_cache
    self._cache = {}
    self._token_cache = {}

  def tokenize(self, text):
    if not self.use_cache:
      split_tokens = []
      for token in self.basic_tokenizer.tokenize(text):
        split_tokens.extend(self.wordpiece_tokenizer.tokenize(token))
      return split_tokens
    # Cleaning is per character and CJK spacing only adds spaces, so the
    # pieces of the cleaned text are a concatenation of per-word results.
    text = convert_to_unicode(text).translate(_CLEAN_AND_SPACE)
    cache = self._cache
    split_tokens = []
    for word in text.split():
      pieces = cache.get(word)
      if pieces is None:
        pieces = self._word_pieces(word)
        if len(cache) < 1_000_000:
          cache[word] = pieces
      split_tokens.extend(pieces)
    if self._unk_watch:
      self._unk_watch = self._unk_watch.add(split_tokens)
    return split_tokens

  def _word_pieces(self, word):
    """Pieces of one cleaned word: `split_word`, then WordPiece."""
    if word.isascii():
      # A cleaned ASCII word has no accents to strip, and each of its
      # non-alphanumeric characters is punctuation.
      if self.do_lower_case:
        word = word.lower()
      tokens = _ASCII_SPLIT.findall(word)
    else:
      tokens = self.basic_tokenizer.split_word(word)
    # Punctuation and common stems recur across words: WordPiece each
    # token once.
    cache = self._token_cache
    pieces = []
    for token in tokens:
      token_pieces = cache.get(token)
      if token_pieces is None:
        token_pieces = self.wordpiece_tokenizer.tokenize(token)
        if len(cache) < 1_000_000:
          cache[token] = token_pieces
      pieces.extend(token_pieces)
    return pieces

  def convert_tokens_to_ids(self, tokens):
    return convert_by_vocab(self.vocab, tokens)

  def convert_ids_to_tokens(self, ids):
    return convert_by_vocab(self.inv_vocab, ids)


def _check_vocab(vocab, vocab_file, do_lower_case):
  """[UNK] must exist (the first unknown word would crash otherwise); an
  uncased vocabulary with do_lower_case=False turns capitals into [UNK]."""
  if "[UNK]" not in vocab:
    raise InputError("%s: the vocabulary has no [UNK]" % vocab_file)
  words = [t for t in vocab if not t.startswith("[")]
  if not do_lower_case and words and not any(t != t.lower() for t in words):
    logging.warning(
      "%s has no upper-case token (an uncased vocabulary?) but "
      "do_lower_case is False: capitalised words will become [UNK]",
      vocab_file,
    )


class _UnkWatch:
  """Warns once if [UNK] is a large share of the first pieces tokenized
  (a vocabulary that does not fit the text)."""

  SAMPLE, SHARE = 500, 0.1

  def __init__(self, vocab_file):
    self.vocab_file, self.pieces, self.unknown = vocab_file, 0, 0

  def add(self, pieces):
    """Counts `pieces`; returns self, or None when the sample is complete."""
    self.pieces += len(pieces)
    self.unknown += pieces.count("[UNK]")
    if self.pieces < self.SAMPLE:
      return self
    if self.unknown > self.SHARE * self.pieces:
      logging.warning(
        "%.0f%% of the first %d word pieces are [UNK] with %s: does the "
        "vocabulary (and --do_lower_case) fit the text?",
        100.0 * self.unknown / self.pieces,
        self.pieces,
        self.vocab_file,
      )
    return None


class BasicTokenizer:
  """Cleans text, spaces CJK, splits on whitespace and punctuation."""

  def __init__(self, do_lower_case=True):
    self.do_lower_case = do_lower_case

  def tokenize(self, text):
    text = self.clean_and_space(convert_to_unicode(text))
    split_tokens = []
    for token in whitespace_tokenize(text):
      split_tokens.extend(self.split_word(token))
    return whitespace_tokenize(" ".join(split_tokens))

  def clean_and_space(self, text):
    """`_clean_text` then `_tokenize_chinese_chars`, as the original."""
    return self._tokenize_chinese_chars(self._clean_text(text))

  def split_word(self, token):
    """Lower-cases/strips accents (if asked) and splits off punctuation."""
    if self.do_lower_case:
      token = self._run_strip_accents(token.lower())
    # The original re-joins all pieces and re-splits on whitespace; splitting
    # each piece gives the same tokens.
    out = []
    for piece in self._run_split_on_punc(token):
      out.extend(piece.split())
    return out

  def _run_strip_accents(self, text):
    text = unicodedata.normalize("NFD", text)
    return "".join(c for c in text if unicodedata.category(c) != "Mn")

  def _run_split_on_punc(self, text):
    output = []
    start_new_word = True
    for char in text:
      if _is_punctuation(char):
        output.append([char])
        start_new_word = True
      else:
        if start_new_word:
          output.append([])
        start_new_word = False
        output[-1].append(char)
    return ["".join(x) for x in output]

  def _tokenize_chinese_chars(self, text):
    output = []
    for char in text:
      if _is_chinese_char(ord(char)):
        output.append(" ")
        output.append(char)
        output.append(" ")
      else:
        output.append(char)
    return "".join(output)

  def _clean_text(self, text):
    output = []
    for char in text:
      cp = ord(char)
      if cp == 0 or cp == 0xFFFD or _is_control(char):
        continue
      output.append(" " if _is_whitespace(char) else char)
    return "".join(output)


class WordpieceTokenizer:
  """Greedy longest-match-first WordPiece over whitespace-split tokens."""

  def __init__(self, vocab, unk_token="[UNK]", max_input_chars_per_word=200):
    self.vocab = vocab
    self.unk_token = unk_token
    self.max_input_chars_per_word = max_input_chars_per_word

  def tokenize(self, text):
    output_tokens = []
    for token in whitespace_tokenize(convert_to_unicode(text)):
      if len(token) > self.max_input_chars_per_word:
        output_tokens.append(self.unk_token)
        continue
      sub_tokens = []
      start = 0
      while start < len(token):
        end = len(token)
        cur_substr = None
        while start < end:
          substr = token[start:end]
          if start > 0:
            substr = "##" + substr
          if substr in self.vocab:
            cur_substr = substr
            break
          end -= 1
        if cur_substr is None:
          sub_tokens = [self.unk_token]
          break
        sub_tokens.append(cur_substr)
        start = end
      output_tokens.extend(sub_tokens)
    return output_tokens


class _CleanAndSpaceTable(dict):
  """`str.translate` table for `_clean_text` then `_tokenize_chinese_chars`.

  Both steps map each character on its own, so together they are one
  per-character map. Each entry is computed by the same predicates the first
  time its character is seen; `translate` then runs at C speed.
  """

  def __missing__(self, cp):
    char = chr(cp)
    if cp == 0 or cp == 0xFFFD or _is_control(char):
      out = None  # deleted
    elif _is_whitespace(char):
      out = " "
    elif _is_chinese_char(cp):
      out = " " + char + " "
    else:
      out = cp
    self[cp] = out
    return out


_CLEAN_AND_SPACE = _CleanAndSpaceTable()


def _is_whitespace(char):
  if char in (" ", "\t", "\n", "\r"):
    return True
  return unicodedata.category(char) == "Zs"


def _is_control(char):
  if char in ("\t", "\n", "\r"):
    return False
  return unicodedata.category(char) in ("Cc", "Cf")


def _is_punctuation(char):
  cp = ord(char)
  if (
    (33 <= cp <= 47)
    or (58 <= cp <= 64)
    or (91 <= cp <= 96)
    or (123 <= cp <= 126)
  ):
    return True
  return unicodedata.category(char).startswith("P")


def _is_chinese_char(cp):
  return (
    (0x4E00 <= cp <= 0x9FFF)
    or (0x3400 <= cp <= 0x4DBF)
    or (0x20000 <= cp <= 0x2A6DF)
    or (0x2A700 <= cp <= 0x2B73F)
    or (0x2B740 <= cp <= 0x2B81F)
    or (0x2B820 <= cp <= 0x2CEAF)
    or (0xF900 <= cp <= 0xFAFF)
    or (0x2F800 <= cp <= 0x2FA1F)
  )
