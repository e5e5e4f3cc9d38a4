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
Records that cannot be re-masked -- a weighted `masked_lm_positions` value
outside the record's tokens, an id outside the vocabulary (records made
with another one) -- are refused (`record_check`): training stops, and
`input_pipeline.refused_record` names the file, the record and the field.

With `whole_word_mask` (`--do_whole_word_mask`) words are chosen as units,
as the original's static whole-word mode (create_pretraining_data
`--do_whole_word_mask`) chooses them: a word is a piece plus the "##" pieces
after it ([CLS]/[SEP] are skipped, so a "##" piece right after [SEP] joins
the word before it, as there), the words are shuffled, and they are taken in
that order while they fit `min(max_predictions_per_seq, max(1, round(
masked_lm_prob * len(tokens))))` pieces (a word that does not fit is
skipped, a later shorter one may still fit). As there, the 80/10/10 rule is
then drawn for each chosen piece (`MaskValuesChooser` on the pieces).
tf_text's `RandomItemSelector` over [batch, words, pieces] would count words,
not pieces, so it could overrun `max_predictions_per_seq`: the selection is
ours.

Example:
    masking = DynamicMasking.from_vocab_file("vocab.txt", 20)
    dataset = dataset.map(masking)  # batched pre-training feature dicts
    trainer.train(masking.wrap(training_dataset_fn(...)), num_steps)
"""

import functools

import tensorflow as tf
import tensorflow_text as tf_text

from bert_tf.io_utils import InputError
from bert_tf.tokenizers import tokenization
from bert_tf.training import input_pipeline

_SPECIAL_TOKENS = ("[CLS]", "[SEP]", "[MASK]")


def unmasked_input_ids(features):
  """`input_ids` [B, S] with the masked-LM labels written back in place."""
  positions = tf.cast(features["masked_lm_positions"], tf.int32)
  rows = tf.broadcast_to(
    tf.range(tf.shape(positions)[0])[:, None], tf.shape(positions)
  )
  real = features["masked_lm_weights"] > 0
  indices = tf.boolean_mask(tf.stack([rows, positions], -1), real)
  labels = tf.boolean_mask(features["masked_lm_ids"], real)
  input_ids = features["input_ids"]
  return tf.tensor_scatter_nd_update(
    input_ids, indices, tf.cast(labels, input_ids.dtype)
  )


class DynamicMasking:
  """Maps a batch of pre-training features to a newly masked batch."""

  def __init__(
    self,
    vocab_size,
    cls_id,
    sep_id,
    mask_id,
    max_predictions_per_seq,
    masked_lm_prob=0.15,
    continuation_ids=None,
  ):
    """`continuation_ids`: the ids of the "##" pieces; given, whole words
    are masked."""
    self.vocab_size = vocab_size
    self.max_predictions_per_seq = max_predictions_per_seq
    self.masked_lm_prob = masked_lm_prob
    self._special_ids = (cls_id, sep_id)
    self._continuation = None
    if continuation_ids is not None:
      self._continuation = tf.scatter_nd(
        tf.reshape(tf.constant(continuation_ids, tf.int64), [-1, 1]),
        tf.ones([len(continuation_ids)], tf.bool),
        [vocab_size],
      )
    self._selector = tf_text.RandomItemSelector(
      max_selections_per_batch=max_predictions_per_seq,
      selection_rate=masked_lm_prob,
      unselectable_ids=[cls_id, sep_id],
    )
    self._chooser = tf_text.MaskValuesChooser(
      vocab_size, mask_id, mask_token_rate=0.8, random_token_rate=0.1
    )

  @classmethod
  def from_vocab_file(
    cls,
    vocab_file,
    max_predictions_per_seq,
    masked_lm_prob=0.15,
    whole_word_mask=False,
  ):
    """Special-token ids looked up by string, as the original does."""
    vocab = tokenization.load_vocab(vocab_file)
    missing = [t for t in _SPECIAL_TOKENS if t not in vocab]
    if missing:
      raise InputError(
        "--vocab_file=%s has no %s token" % (vocab_file, missing[0])
      )
    ids = [vocab[t] for t in _SPECIAL_TOKENS]
    continuation = None
    if whole_word_mask:
      continuation = [i for t, i in vocab.items() if t.startswith("##")]
    return cls(
      max(vocab.values()) + 1,  # a duplicated line keeps its id
      *ids,
      max_predictions_per_seq=max_predictions_per_seq,
      masked_lm_prob=masked_lm_prob,
      continuation_ids=continuation,
    )

  def wrap(self, dataset_fn):
    """`dataset_fn` (for `Trainer.train`) with this masking on its batches.

    The masks come from stateful random ops, so checkpointing the input
    position skips their state (a resumed run draws new masks).
    """
    options = tf.data.Options()
    options.experimental_external_state_policy = (
      tf.data.experimental.ExternalStatePolicy.IGNORE
    )

    def masked_dataset_fn(input_context=None):
      dataset = dataset_fn(input_context).map(
        self, num_parallel_calls=tf.data.AUTOTUNE
      )
      return dataset.prefetch(tf.data.AUTOTUNE).with_options(options)

    # The files a damaged record is looked for in.
    masked_dataset_fn.input_files = getattr(dataset_fn, "input_files", ())
    return masked_dataset_fn

  def record_check(self, features):
    """`input_pipeline.check_records`' check of a batch of parsed records:
    ([B] whether each cannot be re-masked, `describe(row)`: the field and
    value). A weighted position outside the record's tokens would fail the
    scatter that restores them (or write into padding); an id outside the
    vocabulary would fail whole-word masking's lookup."""
    lengths = tf.reduce_sum(tf.cast(features["input_mask"], tf.int32), -1)
    width = tf.shape(features["input_ids"])[1]
    real = {
      "masked_lm_positions": features["masked_lm_weights"] > 0,
      "input_ids": tf.sequence_mask(lengths, width),
      "masked_lm_ids": features["masked_lm_weights"] > 0,
    }
    limits = {  # [B, 1] or a number
      "masked_lm_positions": lengths[:, None],
      "input_ids": self.vocab_size,
      "masked_lm_ids": self.vocab_size,
    }
    bad = {
      name: real[name] & ((features[name] < 0) | (features[name] >= limit))
      for name, limit in limits.items()
    }
    refused = {name: tf.reduce_any(b, -1) for name, b in bad.items()}

    def says(name, row):
      value = tf.boolean_mask(features[name][row], bad[name][row])[0]
      if name == "masked_lm_positions":
        within = [tf.strings.as_string(lengths[row]), " tokens of the record"]
      else:
        within = ["%d ids of the vocabulary" % self.vocab_size]
      value = tf.strings.as_string(value)
      return tf.strings.join(
        [name, " holds ", value, ", outside the "] + within
      )

    def describe(row):  # its first field refused
      return tf.case(
        [
          (refused[name][row], functools.partial(says, name, row))
          for name in limits
        ]
      )

    return tf.reduce_any(tf.stack(list(refused.values())), 0), describe

  def __call__(self, features):
    features = input_pipeline.check_records(features, self.record_check)
    input_ids = unmasked_input_ids(features)
    seq_length = input_ids.shape[1]
    lengths = tf.reduce_sum(tf.cast(features["input_mask"], tf.int32), -1)
    if self._continuation is None:
      tokens = tf.RaggedTensor.from_tensor(input_ids, lengths=lengths)
      masked, positions, labels = tf_text.mask_language_model(
        tokens, self._selector, self._chooser
      )
      masked = masked.to_tensor(0, shape=[None, seq_length])
    else:
      masked, positions, labels = self._mask_whole_words(input_ids, lengths)
    width = self.max_predictions_per_seq
    features = dict(features)
    features["input_ids"] = masked
    features["masked_lm_positions"] = tf.cast(
      positions.to_tensor(0, shape=[None, width]), input_ids.dtype
    )
    features["masked_lm_ids"] = labels.to_tensor(0, shape=[None, width])
    features["masked_lm_weights"] = tf.sequence_mask(
      positions.row_lengths(), width, tf.float32
    )
    return features

  def _mask_whole_words(self, input_ids, lengths):
    """(masked input_ids, ragged positions, ragged labels), whole words."""
    chosen = self._chosen_pieces(input_ids, lengths)
    positions = tf.ragged.boolean_mask(
      tf.broadcast_to(tf.range(tf.shape(input_ids)[1]), tf.shape(input_ids)),
      chosen,
    )
    labels = tf.ragged.boolean_mask(input_ids, chosen)
    values = self._chooser.get_mask_values(labels)
    indices = tf.stack(
      [tf.cast(positions.value_rowids(), tf.int32), positions.flat_values], -1
    )
    masked = tf.tensor_scatter_nd_update(input_ids, indices, values.flat_values)
    return masked, positions, labels

  def _chosen_pieces(self, input_ids, lengths):
    """[B, S] bool: the pieces of the words the original's walk takes."""
    batch, width = tf.shape(input_ids)[0], tf.shape(input_ids)[1]
    real = tf.sequence_mask(lengths, width)
    cls_id, sep_id = self._special_ids
    maskable = real & (input_ids != cls_id) & (input_ids != sep_id)
    maskable_int = tf.cast(maskable, tf.int32)
    first = maskable & (tf.cumsum(maskable_int, axis=1) == 1)
    continues = tf.gather(self._continuation, tf.cast(input_ids, tf.int64))
    starts = maskable & (first | ~continues)
    # Word index of each maskable piece; words are at most `width`.
    word = tf.maximum(tf.cumsum(tf.cast(starts, tf.int32), axis=1) - 1, 0)
    rows = tf.broadcast_to(tf.range(batch)[:, None], [batch, width])
    word_length = tf.reshape(
      tf.math.unsorted_segment_sum(
        maskable_int, rows * width + word, batch * width
      ),
      [batch, width],
    )
    # Shuffle: random keys, empty word slots last.
    keys = tf.where(word_length > 0, tf.random.uniform([batch, width]), 2.0)
    order = tf.argsort(keys, axis=1)
    shuffled = tf.gather(word_length, order, batch_dims=1)
    # As the original: round(len(tokens) * masked_lm_prob) in float64.
    budget = tf.minimum(
      self.max_predictions_per_seq,
      tf.maximum(
        1,
        tf.cast(
          tf.round(tf.cast(lengths, tf.float64) * self.masked_lm_prob), tf.int32
        ),
      ),
    )

    def take(count, length):  # one shuffled word of every row
      fits = (length > 0) & (count + length <= budget)
      return count + tf.where(fits, length, 0)

    counts = tf.scan(
      take, tf.transpose(shuffled), initializer=tf.zeros_like(lengths)
    )
    taken_shuffled = tf.transpose(counts) > tf.concat(
      [tf.zeros([batch, 1], tf.int32), tf.transpose(counts)[:, :-1]], 1
    )
    taken = tf.gather(taken_shuffled, tf.argsort(order, axis=1), batch_dims=1)
    return maskable & tf.gather(taken, word, batch_dims=1)
