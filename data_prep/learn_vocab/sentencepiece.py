"""A SentencePiece model for `--spm_model_file`, trained as ALBERT's was.

ALBERT's recipe (its README's `spm_train` line): a unigram model, <pad>=0,
<unk>=1, no BOS/EOS, [CLS], [SEP] and [MASK] as control symbols (ids 2..4,
never produced from text, looked up by `PieceToId`), and the text
normalised exactly as `SentencePieceTokenizer` normalises it before encoding
(`preprocess_text`, lower-cased when `do_lower_case`), so training and
tokenization see the same strings. The model's own normalisation is off for
the same reason. Every line is used (no sampling) and one thread trains, so
a corpus always gives the same model. TensorFlow-free.

Example:
    model_bytes = train_sentencepiece(lines, 8000, do_lower_case=True)
"""

import io

import sentencepiece as spm

from bert_tf.io_utils import InputError
from bert_tf.tokenizers.sentencepiece_tokenizer import preprocess_text

CONTROL_SYMBOLS = ("[CLS]", "[SEP]", "[MASK]")
# SentencePiece's own default: longer lines are skipped by its trainer.
MAX_SENTENCE_BYTES = 4192


def train_sentencepiece(lines, vocab_size, do_lower_case, source="the corpus"):
  """The serialized model (bytes) trained on the text `lines` (of input
  `source`, for messages)."""
  # A list: a bad input line fails here, not inside the C++ trainer.
  sentences = [preprocess_text(line, do_lower_case) for line in lines]
  text = [s for s in sentences if s.strip()]
  if not any(len(s.encode("utf-8")) <= MAX_SENTENCE_BYTES for s in text):
    raise InputError(
      "%s: no text to learn from (%s)"
      % (
        source,
        "its %d non-empty lines are all longer than the %d bytes "
        "SentencePiece takes" % (len(text), MAX_SENTENCE_BYTES)
        if text
        else "it is empty or holds only blank lines",
      )
    )
  model = io.BytesIO()
  try:
    spm.SentencePieceTrainer.train(
      sentence_iterator=iter(sentences),
      model_writer=model,
      vocab_size=vocab_size,
      model_type="unigram",
      pad_id=0,
      unk_id=1,
      bos_id=-1,
      eos_id=-1,
      control_symbols=",".join(CONTROL_SYMBOLS),
      normalization_rule_name="identity",
      character_coverage=0.99995,
      input_sentence_size=0,
      max_sentence_length=MAX_SENTENCE_BYTES,
      num_threads=1,
      minloglevel=2,
    )
  except RuntimeError as e:
    raise InputError(
      "%s: SentencePiece training failed: %s" % (source, str(e).splitlines()[0])
    ) from e
  return model.getvalue()
