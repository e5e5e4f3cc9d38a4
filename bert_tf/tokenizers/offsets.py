"""Character offsets of the Python tokenizers' tokens in the raw text.

`tokenize_with_offsets(tokenizer, text)` gives the tokens `tokenizer.tokenize`
gives (a `FullTokenizer` or a `SentencePieceTokenizer`) and, for each, the
characters of `text` it comes from, as `text[start:end]`. Both tokenizers
normalise first; applied to one character at a time, the normalisation
says which raw character each normalised character comes from:

  * WordPiece: a piece spans the characters it spells ("caf", "##é" of
    "Café"), `[UNK]` its whole word;
  * SentencePiece: a piece spans what SentencePiece reports for it in the
    normalised text (a piece that starts a word holds the space before it);
    a "<digits>," piece re-split by ALBERT's rule gives the comma its last
    character and each digit piece the characters it spells.

The in-graph tokenizers (`tf_text_tokenizer`, `tf_sentencepiece`) report the
same spans as UTF-8 byte offsets.

Example:
    for token, start, end in tokenize_with_offsets(tokenizer, "Café au lait"):
      print(token, text[start:end])
"""

import unicodedata

from bert_tf.tokenizers import tokenization
from bert_tf.tokenizers.sentencepiece_tokenizer import preprocess_text
from bert_tf.tokenizers.sentencepiece_tokenizer import SentencePieceTokenizer
from bert_tf.tokenizers.sentencepiece_tokenizer import SPIECE_UNDERLINE


def tokenize_with_offsets(tokenizer, text):
  """[(token, start, end)] of `text`'s tokens; `text[start:end]` is where
  each comes from."""
  text = tokenization.convert_to_unicode(text)
  if isinstance(tokenizer, SentencePieceTokenizer):
    return _sentencepiece(tokenizer, text)
  return _wordpiece(tokenizer, text)


def _owners(text, parts, attached=()):
  """For each character of "".join(parts), `parts[i]` being what text[i]
  became: (i, where the text it stands for ends). That takes the following
  characters that became nothing and are combining marks (a deleted accent
  stays with its letter) or in `attached`."""
  ends = list(range(1, len(text) + 1))
  for i in range(len(text) - 1, 0, -1):
    mark = unicodedata.category(text[i]).startswith("M")
    if not parts[i] and (mark or i in attached):
      ends[i - 1] = ends[i]
  return [(i, ends[i]) for i, part in enumerate(parts) for _ in part]


def _span(owners, first, limit, text_length):
  """Raw (start, end) of normalised characters [first, limit)."""
  start = owners[first][0] if first < len(owners) else text_length
  return start, owners[limit - 1][1] if limit > first else start


def _wordpiece(tokenizer, text):
  basic = tokenizer.basic_tokenizer
  parts = []
  for char in text:
    part = basic._clean_text(char)  # pylint: disable=protected-access
    if tokenizer.do_lower_case:
      part = basic._run_strip_accents(part.lower())  # pylint: disable=protected-access
    parts.append(part)
  normalized, owners = "".join(parts), _owners(text, parts)
  out, position = [], 0
  for word in basic.tokenize(text):
    while normalized[position].isspace():
      position += 1
    pieces = tokenizer.wordpiece_tokenizer.tokenize(word)
    if pieces == ["[UNK]"]:
      lengths = [len(word)]
    else:  # a piece after the first is "##" + what it spells
      lengths = [len(p) - (2 if i else 0) for i, p in enumerate(pieces)]
    for piece, length in zip(pieces, lengths):
      span = _span(owners, position, position + length, len(text))
      out.append((piece,) + span)
      position += length
  return out


def _albert_parts(text, do_lower_case):
  """(what each character of `text` becomes under `preprocess_text`, the
  second quote of each pair: the double quote the first became is both)."""
  words = [i for i, c in enumerate(text) if not c.isspace()]
  parts, seconds, i = [], set(), 0
  while i < len(text):
    char = text[i]
    if char.isspace():
      # The first space of a run between words stays, as one space.
      inside = words and words[0] < i < words[-1]
      parts.append(" " if inside and not text[i - 1].isspace() else "")
    elif char in "`'" and text[i + 1 : i + 2] == char:
      parts += ['"', ""]
      seconds.add(i + 1)
      i += 1
    else:
      parts.append(char)
    i += 1
  parts = [
    "".join(
      c
      for c in unicodedata.normalize("NFKD", p)
      if not unicodedata.combining(c)
    )
    for p in parts
  ]
  return ([p.lower() for p in parts] if do_lower_case else parts), seconds


def _sentencepiece(tokenizer, text):
  normalized = preprocess_text(text, tokenizer.do_lower_case)
  owners = _owners(text, *_albert_parts(text, tokenizer.do_lower_case))
  if len(owners) != len(normalized):
    raise ValueError("unaligned normalisation of %r" % text)
  # SentencePiece reports UTF-8 byte offsets into `normalized`.
  char_at = []
  for i, char in enumerate(normalized):
    char_at += [i] * len(char.encode("utf-8"))
  char_at.append(len(normalized))
  out = []
  for p in tokenizer.sp_model.EncodeAsProto(normalized).pieces:
    first, limit = char_at[p.begin], char_at[p.end]
    if len(p.piece) > 1 and p.piece[-1] == "," and p.piece[-2].isdigit():
      # The digits end at the comma, each where the next ones start.
      subs = tokenizer._split_digit_comma(p.piece)[:-1]  # pylint: disable=protected-access
      lengths = [len(s.replace(SPIECE_UNDERLINE, "")) for s in subs]
      for k, sub in enumerate(subs):
        end = limit - 1 - sum(lengths[k + 1 :])
        start = first if k == 0 else max(end - lengths[k], first)
        out.append((sub,) + _span(owners, start, end, len(text)))
      out.append((",",) + _span(owners, limit - 1, limit, len(text)))
    else:
      out.append((p.piece,) + _span(owners, first, limit, len(text)))
  return out
