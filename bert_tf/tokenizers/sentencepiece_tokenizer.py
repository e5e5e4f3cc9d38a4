"""SentencePiece tokenization with `FullTokenizer`'s interface, ALBERT-style.

Text is first normalised as ALBERT's `preprocess_text` does: whitespace runs
collapse to one space, LaTeX quotes (two backquotes, two apostrophes) become
a double quote, NFKD is applied and combining marks are dropped, and the text
is lower-cased when `do_lower_case`. Pieces come from the SentencePiece model;
a piece such as "▁1990," (digits followed by a comma) is re-split so that the
comma is its own piece, as ALBERT/XLNet do.

Unlike `FullTokenizer`, `convert_tokens_to_ids` maps an unknown piece to the
model's unk id instead of raising: SentencePiece can emit pieces for
characters it never saw, and ALBERT looks them up with `PieceToId`.

Example:
    tokenizer = SentencePieceTokenizer("30k-clean.model", do_lower_case=True)
    tokens = tokenizer.tokenize("Hello, World!")
    ids = tokenizer.convert_tokens_to_ids(["[CLS]"] + tokens + ["[SEP]"])
"""

import unicodedata

import sentencepiece as spm

from bert_tf.tokenizers import tokenization

SPIECE_UNDERLINE = "\u2581"  # SentencePiece's word-boundary marker.


def preprocess_text(text, do_lower_case):
  """ALBERT's text normalisation ahead of SentencePiece."""
  text = " ".join(tokenization.convert_to_unicode(text).strip().split())
  text = text.replace("``", '"').replace("''", '"')
  text = unicodedata.normalize("NFKD", text)
  text = "".join(c for c in text if not unicodedata.combining(c))
  return text.lower() if do_lower_case else text


def pieces_to_text(pieces):
  """The (preprocessed) text of consecutive pieces: "▁new", "s" -> "news"."""
  return "".join(pieces).replace(SPIECE_UNDERLINE, " ").strip()


class SentencePieceTokenizer:
  """Tokenizes with a SentencePiece model; same methods as `FullTokenizer`."""

  def __init__(self, model_file, do_lower_case=True):
    self.do_lower_case = do_lower_case
    self.sp_model = spm.SentencePieceProcessor()
    self.sp_model.Load(model_file)
    self.vocab = {
      self.sp_model.IdToPiece(i): i for i in range(self.sp_model.GetPieceSize())
    }
    self.inv_vocab = {v: k for k, v in self.vocab.items()}

  def tokenize(self, text):
    pieces = self.sp_model.EncodeAsPieces(
      preprocess_text(text, self.do_lower_case)
    )
    out = []
    for piece in pieces:
      if len(piece) > 1 and piece[-1] == "," and piece[-2].isdigit():
        out.extend(self._split_digit_comma(piece))
      else:
        out.append(piece)
    return out

  def _split_digit_comma(self, piece):
    """Re-encodes "<digits>," without the comma, then appends the comma."""
    sub = self.sp_model.EncodeAsPieces(piece[:-1].replace(SPIECE_UNDERLINE, ""))
    # The re-encoding adds a word-boundary marker the piece may not have had.
    if piece[0] != SPIECE_UNDERLINE and sub and sub[0][0] == SPIECE_UNDERLINE:
      sub = sub[1:] if len(sub[0]) == 1 else [sub[0][1:]] + sub[1:]
    return sub + [piece[-1]]

  def convert_tokens_to_ids(self, tokens):
    return [self.sp_model.PieceToId(t) for t in tokens]

  def convert_ids_to_tokens(self, ids):
    return [self.sp_model.IdToPiece(i) for i in ids]
