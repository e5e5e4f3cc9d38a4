r"""TF Hub text preprocessor: raw strings -> BERT encoder inputs.

The "common SavedModel API for text" preprocessor, as TF Model Garden's
`export_tfhub --export_type=preprocessing` writes it:

    import tensorflow_text  # its ops, before loading
    preprocess = tf.saved_model.load(export_dir)
    preprocess(strings)          # {input_word_ids, input_mask, input_type_ids}
                                 # int32 [batch, max_seq_length]
    preprocess.tokenize(strings)  # ragged int32 [batch, words, word pieces]
    preprocess.bert_pack_inputs([tokens_a, tokens_b], seq_length=256)

`bert_pack_inputs` takes 1 or 2 ragged segments ([batch, pieces] or
[batch, words, pieces]), trims them round-robin to `seq_length` and packs
`[CLS] a [SEP] (b [SEP])`, padded with 0; `seq_length` defaults to
`--max_seq_length`. Unlike the original's pair packing (an empty `text_b`
row is packed as a single text) every segment gets its `[SEP]`, as in
Model Garden. Word pieces come from `TfTextTokenizer.word_pieces` (the
original FullTokenizer's ids). The signature `serving_default` takes
`sentences` [batch].

Example:
    python -m bert_tf.export_saved_model --task=tfhub_preprocess \
      --vocab_file=vocab.txt --do_lower_case=True --max_seq_length=128 \
      --export_dir=/tmp/bert_preprocess
"""

import tensorflow as tf
import tensorflow_text as text

from bert_tf.export import register_exporter
from bert_tf.export.tfhub_common import TfHubExporter
from bert_tf.io_utils import InputError
from bert_tf.tokenizers.loading import load_tokenizer
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


class TfHubPreprocessor(tf.train.Checkpoint):
  """The SavedModel's root: callable, `.tokenize`, `.bert_pack_inputs`."""

  def __init__(self, tokenizer, seq_length):
    super().__init__()
    self.tokenizer = tokenizer  # tracks the vocab it tokenizes with
    self.vocab_file = tf.saved_model.Asset(tokenizer.vocab_file)
    self.bert_pack_inputs = _PackInputs(
      tokenizer.cls_id, tokenizer.sep_id, seq_length
    )
    self.tokenize = tf.function(
      tokenizer.word_pieces, input_signature=[_STRINGS]
    )

    @tf.function(input_signature=[_STRINGS])
    def call(sentences):
      return pack_segments(
        [tokenizer.word_pieces(sentences)],
        seq_length,
        tokenizer.cls_id,
        tokenizer.sep_id,
      )

    self.__call__ = call


@register_exporter("tfhub_preprocess")
class TfHubPreprocessExporter(TfHubExporter):
  """`--vocab_file` + `--do_lower_case` as a TF Hub preprocessor (needs no
  checkpoint or config)."""

  NEEDS_CHECKPOINT = False
  INPUTS = ("sentences",)

  def __init__(
    self, config, vocab_file, do_lower_case, max_seq_length, options=None
  ):
    del config, options  # a preprocessor has neither
    if max_seq_length < 3:
      raise InputError(
        "--max_seq_length=%d: too short for [CLS] x [SEP]" % max_seq_length
      )
    self.max_seq_length = max_seq_length
    self.options = {}
    load_tokenizer(vocab_file, do_lower_case)  # [UNK], [CLS], [SEP]: one line
    self.tokenizer = TfTextTokenizer(vocab_file, do_lower_case)
    self.root = TfHubPreprocessor(self.tokenizer, max_seq_length)
    self._metadata = {
      "task": self.NAME,
      "max_seq_length": max_seq_length,
      "do_lower_case": bool(do_lower_case),
      "vocab_file": vocab_file,
    }

  def restore(self, checkpoint):
    del checkpoint  # no weights

  def signatures(self):
    return {"serving_default": self.root.__call__.get_concrete_function()}
