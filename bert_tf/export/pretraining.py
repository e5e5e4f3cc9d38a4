"""Pre-training SavedModel: masked-LM guesses for `[MASK]` in raw text.

`text_a` [, `text_b`] contain the literal `[MASK]` (upper case; the rest of
the text is tokenized as usual). Each `[MASK]` becomes the mask id, the
texts are packed like a pre-training pair, and for the first
`max_predictions_per_seq` mask positions the model returns the `top_k`
word pieces. Outputs: `mask_positions` [batch, P] (-1 = no mask there),
`top_k_ids` / `top_k_tokens` / `top_k_log_probs` [batch, P, top_k] (id -1,
token "" and log-prob 0 at unused slots) and `next_sentence_probabilities`
[batch, 2] (class 0 = text_b follows text_a).

Example:
    python -m bert_tf.export_saved_model --task=pretraining \
      --checkpoint=/tmp/pretraining_output --bert_config_file=... \
      --vocab_file=vocab.txt --top_k=5 --export_dir=/tmp/mlm_sm
"""

import tensorflow as tf

from bert_tf.export import register_exporter
from bert_tf.export.base import Exporter
from bert_tf.export.base import Option
from bert_tf.export.base import vocab_tokens
from bert_tf.io_utils import InputError
from bert_tf.tasks.pretraining import PretrainingModel

_MASK = "[MASK]"


@register_exporter("pretraining")
class PretrainingExporter(Exporter):
  """`run_pretraining.py`'s model (MLM + NSP heads) over raw text."""

  INPUTS = ("text_a", "text_b")
  OPTIONS = (
    Option("top_k", 5, "pretraining: word pieces returned per [MASK]."),
    Option(
      "max_predictions_per_seq",
      20,
      "pretraining: [MASK] positions predicted per sequence (the first ones).",
    ),
  )

  def resolve_options(self, options):
    for name in ("top_k", "max_predictions_per_seq"):
      if options[name] < 1:
        raise InputError("--%s=%d: must be positive" % (name, options[name]))
    return options

  def build_model(self, config):
    self._tokens = vocab_tokens(self.tokenizer.vocab_file)
    if _MASK not in self._tokens:
      raise InputError(
        "%s: the vocab has no %s token" % (self.tokenizer.vocab_file, _MASK)
      )
    self._mask_id = self._tokens.index(_MASK)
    if self.options["top_k"] > config.vocab_size:
      raise InputError(
        "--top_k=%d: over the vocab size %d"
        % (self.options["top_k"], config.vocab_size)
      )
    return PretrainingModel(config)

  def _tokenize(self, texts):
    """Word-piece ids with each literal [MASK] as the mask id."""
    pieces = tf.strings.split(texts, _MASK)  # [B, pieces]
    ids = self.tokenizer(pieces.flat_values)  # [pieces, None]
    # A mask id follows every piece but the last of its text.
    row_lengths = pieces.row_lengths()
    not_last = tf.cast(
      tf.ragged.range(row_lengths).flat_values
      < tf.gather(row_lengths, pieces.value_rowids()) - 1,
      tf.int64,
    )
    mask = tf.RaggedTensor.from_row_lengths(
      tf.fill([tf.reduce_sum(not_last)], self._mask_id), not_last
    )
    with_masks = tf.concat([ids, mask], axis=1)
    return tf.RaggedTensor.from_row_lengths(
      with_masks.values,
      tf.math.segment_sum(with_masks.row_lengths(), pieces.value_rowids()),
    )

  def serve(self, text_a, text_b):
    text_a, text_b = self.check_batch([text_a, text_b])
    features = self.tokenizer.pack(
      [self._tokenize(text_a), self._tokenize(text_b)], self.max_seq_length
    )
    num = self.options["max_predictions_per_seq"]
    where = tf.where(tf.equal(features["input_ids"], self._mask_id))
    positions = tf.RaggedTensor.from_value_rowids(
      tf.cast(where[:, 1], tf.int32),
      where[:, 0],
      nrows=tf.shape(text_a, out_type=tf.int64)[0],
    )[:, :num]
    used = tf.sequence_mask(positions.row_lengths(), num)
    positions = positions.to_tensor(0, shape=[None, num])
    outputs = self.model(
      dict(features, masked_lm_positions=positions), training=False
    )
    log_probs, ids = tf.math.top_k(
      outputs["masked_lm_log_probs"], self.options["top_k"]
    )
    used_k = tf.broadcast_to(used[:, :, None], tf.shape(ids))
    return {
      "mask_positions": tf.where(used, positions, -1),
      "top_k_ids": tf.where(used_k, ids, -1),
      "top_k_tokens": tf.where(used_k, tf.gather(self._tokens, ids), ""),
      "top_k_log_probs": tf.where(used_k, log_probs, 0.0),
      "next_sentence_probabilities": tf.exp(outputs["next_sentence_log_probs"]),
    }
