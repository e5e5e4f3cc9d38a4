r"""TF Hub text preprocessor: raw strings -> BERT encoder inputs.

The "common SavedModel API for text" preprocessor, as TF Model Garden's
`export_tfhub --export_type=preprocessing` writes it:

    import tensorflow_text  # its ops, before loading
    preprocess = tf.saved_model.load(export_dir)
    preprocess(strings)          # {input_word_ids, input_mask, input_type_ids}
                                 # int32 [batch, max_seq_length]
    preprocess.tokenize(strings)  # ragged int32 [batch, words, word pieces]
                                  # (SentencePiece: [batch, pieces])
    tokens, starts, limits = preprocess.tokenize_with_offsets(strings)
    preprocess.tokenize.get_special_tokens_dict()  # start_of_sequence_id,
        # end_of_segment_id, padding_id, mask_id (if any), vocab_size
    preprocess.bert_pack_inputs([tokens_a, tokens_b], seq_length=256)

`--vocab_file` gives WordPiece, the original FullTokenizer's ids
(`TfTextTokenizer.word_pieces`); `--spm_model_file` gives SentencePiece with
the ids the scripts' `--spm_model_file` gives (`TfSentencePiece`: ALBERT's
normalisation and "<digits>," re-split; Model Garden's case-folds and strips
only Mn). `tokenize_with_offsets` adds, shaped as the tokens, each token's
first and past-the-end byte in its raw string (int64, UTF-8 bytes as in
Model Garden: `tf.strings.substr(text, start, limit - start)` is the text
it comes from); a WordPiece `[UNK]` spans its word, a SentencePiece piece
that starts a word the space before it.

`bert_pack_inputs` takes 1 or 2 ragged segments ([batch, pieces] or
[batch, words, pieces]), trims them round-robin to `seq_length` and packs
`[CLS] a [SEP] (b [SEP])`, padded with 0 (`padding_id`); `seq_length`
defaults to `--max_seq_length`. Unlike the original's pair packing (an
empty `text_b` row is packed as a single text) every segment gets its
`[SEP]`, as in Model Garden. The signature `serving_default` takes
`sentences` [batch]. The vocabulary or model is the asset `vocab_file` or
`sp_model_file`.

Example:
    python -m bert_tf.export_saved_model --task=tfhub_preprocess \
      --vocab_file=vocab.txt --do_lower_case=True --max_seq_length=128 \
      --export_dir=/tmp/bert_preprocess
    python -m bert_tf.export_saved_model --task=tfhub_preprocess \
      --spm_model_file=30k-clean.model --export_dir=/tmp/albert_preprocess
"""

import tensorflow as tf
import tensorflow_text as text

from bert_tf.export import register_exporter
from bert_tf.export.tfhub_common import SPM_MODEL_FILE
from bert_tf.export.tfhub_common import TfHubExporter
from bert_tf.export.tfhub_common import tokenizer_file
from bert_tf.io_utils import InputError
from bert_tf.tokenizers.loading import load_tokenizer
from bert_tf.tokenizers.tf_sentencepiece import TfSentencePiece
from bert_tf.tokenizers.tf_text_tokenizer import TfTextTokenizer

_STRINGS = tf.TensorSpec([None], tf.string, name="sentences")


def pack_segments(segments, seq_length, cls_id, sep_id):
  """Model Garden's `BertPackInputs` on 1 or 2 ragged id segments.

  Not `tf_text_tokenizer.pack_inputs`: TF Hub preprocessors give every
  segment its [SEP] (an empty second segment included) and trim all
  segments round-robin, whatever their number.
  """
  segments = [
    s.merge_dims(-2, -1) if s.ragged_rank == 2 else s for s in segments
  ]
  trimmed = text.RoundRobinTrimmer(seq_length - len(segments) - 1).trim(
    segments
  )
  ids, type_ids = text.combine_segments(trimmed, cls_id, sep_id)
  word_ids, mask = text.pad_model_inputs(ids, seq_length)
  type_ids, _ = text.pad_model_inputs(type_ids, seq_length)
  return {
    "input_word_ids": tf.cast(word_ids, tf.int32),
    "input_mask": tf.cast(mask, tf.int32),
    "input_type_ids": tf.cast(type_ids, tf.int32),
  }


def special_tokens(vocab, vocab_size):
  """Model Garden's `get_special_tokens_dict()` of a vocabulary."""
  names = {
    "start_of_sequence_id": "[CLS]",
    "end_of_segment_id": "[SEP]",
    "mask_id": "[MASK]",
  }
  found = {key: vocab[token] for key, token in names.items() if token in vocab}
  # What bert_pack_inputs pads with, as the original's features are.
  return dict(found, padding_id=0, vocab_size=vocab_size)


class _PackInputs(tf.train.Checkpoint):
  """`bert_pack_inputs`: callable with a list of segments and an optional
  `seq_length` (a tensor, so a loaded model still takes any length)."""

  def __init__(self, cls_id, sep_id, default_seq_length):
    super().__init__()

    @tf.function(autograph=False)
    def call(inputs, seq_length=default_seq_length):
      return pack_segments(inputs, seq_length, cls_id, sep_id)

    self.__call__ = call
    # A SavedModel keeps only traced functions: one per segment count and
    # ragged rank.
    for ragged_rank in (1, 2):
      for num_segments in (1, 2):
        call.get_concrete_function(
          [
            tf.RaggedTensorSpec(
              [None] * (ragged_rank + 1), tf.int32, ragged_rank=ragged_rank
            )
          ]
          * num_segments,
          seq_length=tf.TensorSpec([], tf.int32),
        )


class _Tokenize(tf.train.Checkpoint):
  """`tokenize` / `tokenize_with_offsets`: callable on strings [batch],
  with Model Garden's `get_special_tokens_dict()`."""

  def __init__(self, function, special_tokens_dict):
    super().__init__()
    self.__call__ = tf.function(function, input_signature=[_STRINGS])
    self.get_special_tokens_dict = special_tokens_dict


class TfHubPreprocessor(tf.train.Checkpoint):
  """The SavedModel's root: callable, `.tokenize`,
  `.tokenize_with_offsets`, `.bert_pack_inputs`, the vocabulary asset."""

  def __init__(self, tokenizer, functions, specials, seq_length, asset):
    super().__init__()
    self.tokenizer = tokenizer  # tracks what it tokenizes with
    setattr(self, asset[0], tf.saved_model.Asset(asset[1]))
    cls_id = specials["start_of_sequence_id"]
    sep_id = specials["end_of_segment_id"]
    self.bert_pack_inputs = _PackInputs(cls_id, sep_id, seq_length)
    specials_dict = tf.train.Checkpoint()
    specials_dict.__call__ = tf.function(
      lambda: {k: tf.constant(v, tf.int32) for k, v in specials.items()},
      input_signature=[],
    )
    tokenize, with_offsets = functions
    self.tokenize = _Tokenize(tokenize, specials_dict)
    self.tokenize_with_offsets = _Tokenize(with_offsets, specials_dict)

    @tf.function(input_signature=[_STRINGS])
    def call(sentences):
      pieces = self.tokenize.__call__(sentences)  # traced once
      return pack_segments([pieces], seq_length, cls_id, sep_id)

    self.__call__ = call


@register_exporter("tfhub_preprocess")
class TfHubPreprocessExporter(TfHubExporter):
  """`--vocab_file` or `--spm_model_file`, + `--do_lower_case`, as a TF Hub
  preprocessor (needs no checkpoint or config)."""

  NEEDS_CHECKPOINT = False
  INPUTS = ("sentences",)
  OPTIONS = (SPM_MODEL_FILE,)

  def __init__(
    self, config, vocab_file, do_lower_case, max_seq_length, options=None
  ):
    del config  # a preprocessor has none
    if max_seq_length < 3:
      raise InputError(
        "--max_seq_length=%d: too short for [CLS] x [SEP]" % max_seq_length
      )
    path, sentencepiece = tokenizer_file(vocab_file, options)
    self.max_seq_length = max_seq_length
    self.options = {"spm_model_file": path if sentencepiece else None}
    if sentencepiece:
      # One line for a file that is no model or lacks [CLS] / [SEP].
      checked = load_tokenizer(None, do_lower_case, path)
      self.tokenizer = TfSentencePiece(path, do_lower_case)
      size = len(checked.vocab)
      functions = (
        self.tokenizer.tokenize,
        self.tokenizer.tokenize_with_offsets,
      )
    else:
      checked = load_tokenizer(path, do_lower_case)  # [UNK], [CLS], [SEP]
      self.tokenizer = TfTextTokenizer(path, do_lower_case)
      size = max(checked.vocab.values()) + 1
      functions = (
        self.tokenizer.word_pieces,
        self.tokenizer.word_pieces_with_offsets,
      )
    asset = ("sp_model_file" if sentencepiece else "vocab_file", path)
    self.root = TfHubPreprocessor(
      self.tokenizer,
      functions,
      special_tokens(checked.vocab, size),
      max_seq_length,
      asset,
    )
    self._metadata = {
      "task": self.NAME,
      "max_seq_length": max_seq_length,
      "do_lower_case": bool(do_lower_case),
      "spm_model_file" if sentencepiece else "vocab_file": path,
    }

  def restore(self, checkpoint):
    del checkpoint  # no weights

  def signatures(self):
    return {"serving_default": self.root.__call__.get_concrete_function()}
