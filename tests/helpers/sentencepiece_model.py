"""A tiny SentencePiece model trained in a test (well under a second).

Example:
    model_file = train_model(tmp_path, ["Some text.", "More text."], 200)
    tokenizer = SentencePieceTokenizer(model_file)
"""

import sentencepiece as spm

# ALBERT's layout: <pad>=0, <unk>=1, then the BERT specials.
SPECIALS = ["[CLS]", "[SEP]", "[MASK]"]


def train_model(folder, lines, vocab_size, symbols=()):
  """Trains a unigram model on `lines`; returns the .model path. `symbols`:
  more pieces it must have (e.g. "1990,")."""
  corpus = folder / "spm_corpus.txt"
  corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
  spm.SentencePieceTrainer.train(
    input=str(corpus),
    model_prefix=str(folder / "spm"),
    vocab_size=vocab_size,
    model_type="unigram",
    pad_id=0,
    unk_id=1,
    bos_id=-1,
    eos_id=-1,
    user_defined_symbols=SPECIALS + list(symbols),
    character_coverage=1.0,
    num_threads=1,
    minloglevel=2,
    hard_vocab_limit=False,
  )
  return str(folder / "spm.model")
