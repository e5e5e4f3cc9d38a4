"""Pre-training instances -> TFRecord examples with the original features.

Features (as the original's `write_instance_to_example_files`):
  input_ids, input_mask, segment_ids       int64 [max_seq_length], 0-padded
  masked_lm_positions, masked_lm_ids       int64 [max_predictions_per_seq]
  masked_lm_weights                        float [max_predictions_per_seq]
  next_sentence_labels                     int64 [1], 1 = B is random

Example:
    record = PretrainingRecordEncoder(tokenizer, 128, 20).encode(instance)
    records, stats = make_records(documents, tokenizer, options, rng)
    write_round_robin(records, ["a.tfrecord", "b.tfrecord"])
"""

import collections

from tqdm import tqdm

from bert_tf.records import example_bytes as pb
from data_prep.pretraining.instances import generate_instances
from bert_tf.records.tfrecord_file import write_tfrecord_file

RecordStats = collections.namedtuple(
    "RecordStats", ["documents", "instances", "masked_tokens"])


class _TokenVarints(dict):
  """token -> varint of its id; tokens outside `.vocab` ask the tokenizer."""

  def __init__(self, tokenizer):
    super().__init__((t, pb.varint(i)) for t, i in tokenizer.vocab.items())
    self._tokenizer = tokenizer

  def __missing__(self, token):
    value = pb.varint(self._tokenizer.convert_tokens_to_ids([token])[0])
    self[token] = value
    return value


class PretrainingRecordEncoder:
  """Serializes `TrainingInstance`s to tf.train.Example bytes."""

  def __init__(self, tokenizer, max_seq_length, max_predictions_per_seq):
    self.max_seq_length = max_seq_length
    self.max_predictions_per_seq = max_predictions_per_seq
    self._token_varints = _TokenVarints(tokenizer)
    # Entries that only depend on a length or a label, by that value.
    self._input_masks = [
        pb.int64_entry("input_mask", b"\x01" * n + bytes(max_seq_length - n))
        for n in range(max_seq_length + 1)]
    self._weights = [
        pb.float_entry("masked_lm_weights",
                       [1.0] * k + [0.0] * (max_predictions_per_seq - k))
        for k in range(max_predictions_per_seq + 1)]
    self._labels = [pb.int64_entry("next_sentence_labels", bytes([label]))
                    for label in (0, 1)]

  def _ids(self, tokens):
    return b"".join(map(self._token_varints.__getitem__, tokens))

  def encode(self, instance):
    n = len(instance.tokens)
    pad = self.max_seq_length - n
    k = len(instance.masked_lm_positions)
    mask_pad = self.max_predictions_per_seq - k
    if pad < 0 or mask_pad < 0:
      raise ValueError("instance longer than max_seq_length or "
                       "max_predictions_per_seq")
    # Padding zeros are one b"\0" varint each; 0/1 ids are their own bytes.
    return pb.example_bytes([
        pb.int64_entry("input_ids", self._ids(instance.tokens) + bytes(pad)),
        self._input_masks[n],
        pb.int64_entry("segment_ids",
                       bytes(instance.segment_ids) + bytes(pad)),
        pb.int64_entry("masked_lm_positions",
                       pb.packed_int64(instance.masked_lm_positions) +
                       bytes(mask_pad)),
        pb.int64_entry("masked_lm_ids",
                       self._ids(instance.masked_lm_labels) + bytes(mask_pad)),
        self._weights[k],
        self._labels[int(instance.is_random_next)],
    ])


def write_round_robin(records, output_files):
  """Writes record i to output_files[i % n], each file atomically."""
  for j, path in enumerate(output_files):
    write_tfrecord_file(path, records[j::len(output_files)])


def make_records(documents, tokenizer, options, rng, progress=False):
  """The original's instances as serialized examples, in output order.

  Instances are encoded as soon as they are made (a record is a few times
  smaller than a TrainingInstance); the original's final shuffle only
  depends on the count, so shuffling the records gives its order.
  """
  encoder = PretrainingRecordEncoder(tokenizer, options.max_seq_length,
                                     options.max_predictions_per_seq)
  instances = generate_instances(documents, list(tokenizer.vocab.keys()),
                                 options, rng)
  records = []
  masked_tokens = 0
  for instance in tqdm(instances, unit=" instances", desc="instances",
                       disable=None if progress else True):
    records.append(encoder.encode(instance))
    masked_tokens += len(instance.masked_lm_positions)
  rng.shuffle(records)
  return records, RecordStats(len(documents), len(records), masked_tokens)
