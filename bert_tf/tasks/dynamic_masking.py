"""`DynamicMasking`: fresh masked-LM masks for every batch (RoBERTa style).

The original masks once, when the TFRecords are made, so every epoch sees
the same `dupe_factor` masks. With `run_pretraining.py --dynamic_masking`
the same TFRecords are read as *unmasked token files*: the original tokens
are put back first (`masked_lm_ids` scattered into `input_ids` at the
`masked_lm_positions` whose weight is > 0, which restores the sequence
exactly, including the 10% kept and 10% random replacements), then
tensorflow_text's `mask_language_model` draws new masks: a
`RandomItemSelector` picks `ceil(masked_lm_prob * n)` of the n real tokens,
never [CLS], [SEP] or padding, capped at `max_predictions_per_seq`, and a
`MaskValuesChooser` makes 80% of them [MASK], 10% a random vocabulary id and
leaves 10% unchanged. Randomness follows the TF global seed (`--seed`).

Example:
    masking = DynamicMasking.from_vocab_file("vocab.txt", 20)
    dataset = dataset.map(masking)  # batched pre-training feature dicts
    trainer.train(masking.wrap(training_dataset_fn(...)), num_steps)
"""

import tensorflow as tf
import tensorflow_text as tf_text

from bert_tf.tokenizers import tokenization
from bert_tf.io_utils import InputError

_SPECIAL_TOKENS = ("[CLS]", "[SEP]", "[MASK]")


def unmasked_input_ids(features):
  """`input_ids` [B, S] with the masked-LM labels written back in place."""
  positions = tf.cast(features["masked_lm_positions"], tf.int32)
  rows = tf.broadcast_to(tf.range(tf.shape(positions)[0])[:, None],
                         tf.shape(positions))
  real = features["masked_lm_weights"] > 0
  indices = tf.boolean_mask(tf.stack([rows, positions], -1), real)
  labels = tf.boolean_mask(features["masked_lm_ids"], real)
  input_ids = features["input_ids"]
  return tf.tensor_scatter_nd_update(input_ids, indices,
                                     tf.cast(labels, input_ids.dtype))


class DynamicMasking:
  """Maps a batch of pre-training features to a newly masked batch."""

  def __init__(self, vocab_size, cls_id, sep_id, mask_id,
               max_predictions_per_seq, masked_lm_prob=0.15):
    self.max_predictions_per_seq = max_predictions_per_seq
    self._selector = tf_text.RandomItemSelector(
        max_selections_per_batch=max_predictions_per_seq,
        selection_rate=masked_lm_prob, unselectable_ids=[cls_id, sep_id])
    self._chooser = tf_text.MaskValuesChooser(
        vocab_size, mask_id, mask_token_rate=0.8, random_token_rate=0.1)

  @classmethod
  def from_vocab_file(cls, vocab_file, max_predictions_per_seq,
                      masked_lm_prob=0.15):
    """Special-token ids looked up by string, as the original does."""
    vocab = tokenization.load_vocab(vocab_file)
    missing = [t for t in _SPECIAL_TOKENS if t not in vocab]
    if missing:
      raise InputError("--vocab_file=%s has no %s token" %
                       (vocab_file, missing[0]))
    ids = [vocab[t] for t in _SPECIAL_TOKENS]
    return cls(len(vocab), *ids, max_predictions_per_seq=max_predictions_per_seq,
               masked_lm_prob=masked_lm_prob)

  def wrap(self, dataset_fn):
    """`dataset_fn` (for `Trainer.train`) with this masking on its batches.

    The masks come from stateful random ops, so checkpointing the input
    position skips their state (a resumed run draws new masks).
    """
    options = tf.data.Options()
    options.experimental_external_state_policy = (
        tf.data.experimental.ExternalStatePolicy.IGNORE)

    def masked_dataset_fn(input_context=None):
      dataset = dataset_fn(input_context).map(
          self, num_parallel_calls=tf.data.AUTOTUNE)
      return dataset.prefetch(tf.data.AUTOTUNE).with_options(options)

    return masked_dataset_fn

  def __call__(self, features):
    input_ids = unmasked_input_ids(features)
    seq_length = input_ids.shape[1]
    lengths = tf.reduce_sum(tf.cast(features["input_mask"], tf.int32), -1)
    tokens = tf.RaggedTensor.from_tensor(input_ids, lengths=lengths)
    masked, positions, labels = tf_text.mask_language_model(
        tokens, self._selector, self._chooser)
    width = self.max_predictions_per_seq
    features = dict(features)
    features["input_ids"] = masked.to_tensor(0, shape=[None, seq_length])
    features["masked_lm_positions"] = tf.cast(
        positions.to_tensor(0, shape=[None, width]), input_ids.dtype)
    features["masked_lm_ids"] = labels.to_tensor(0, shape=[None, width])
    features["masked_lm_weights"] = tf.sequence_mask(
        positions.row_lengths(), width, tf.float32)
    return features
