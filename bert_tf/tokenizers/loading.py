"""The tokenizer a script's flags name: WordPiece, or SentencePiece.

`--spm_model_file` replaces `--vocab_file` (ALBERT style); either way the
special tokens the task writes must be in the vocabulary, since
SentencePiece would silently map a missing one to <unk>.

Example:
    tokenizer = load_tokenizer(FLAGS.vocab_file, FLAGS.do_lower_case,
                               FLAGS.spm_model_file)
    ids = tokenizer.convert_tokens_to_ids(
        ["[CLS]"] + tokenizer.tokenize("Hello!") + ["[SEP]"])
"""

from bert_tf.io_utils import first_line
from bert_tf.io_utils import InputError
from bert_tf.io_utils import require_file
from bert_tf.tokenizers import tokenization


def load_tokenizer(
  vocab_file,
  do_lower_case,
  spm_model_file=None,
  required_tokens=("[CLS]", "[SEP]"),
):
  """FullTokenizer on `vocab_file`, or SentencePiece when a model is given.

  Raises:
    InputError: the file is missing or lacks one of `required_tokens`.
  """
  if spm_model_file and vocab_file:
    raise InputError(
      "--spm_model_file=%s and --vocab_file=%s: give one (a "
      "SentencePiece model replaces the vocabulary)"
      % (spm_model_file, vocab_file)
    )
  if spm_model_file:
    flag, path = "spm_model_file", spm_model_file
    require_file(path, flag)
    # Imported here: sentencepiece is only needed with a model.
    from bert_tf.tokenizers import sentencepiece_tokenizer  # pylint: disable=g-import-not-at-top

    try:
      tokenizer = sentencepiece_tokenizer.SentencePieceTokenizer(
        path, do_lower_case
      )
    except RuntimeError as e:  # sentencepiece's "could not parse ModelProto"
      raise InputError(
        "--spm_model_file=%s: not a SentencePiece model (%s)"
        % (path, first_line(e))
      ) from None
  else:
    flag, path = "vocab_file", vocab_file
    require_file(path, flag)
    tokenizer = tokenization.FullTokenizer(path, do_lower_case)
  for token in required_tokens:
    if token not in tokenizer.vocab:
      raise InputError(
        "--%s=%s: the vocabulary has no %s" % (flag, path, token)
      )
  return tokenizer
