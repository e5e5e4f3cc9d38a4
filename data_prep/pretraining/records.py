"""Pre-training instances -> TFRecord examples with the original features.

Features (`task_schemas.pretraining_schema`, as the original's
`write_instance_to_example_files`):
  input_ids, input_mask, segment_ids       int64 [max_seq_length], 0-padded
  masked_lm_positions, masked_lm_ids       int64 [max_predictions_per_seq]
  masked_lm_weights                        float [max_predictions_per_seq]
  next_sentence_labels                     int64 [1], 1 = B is random
Values are passed to the schema packed: token varints from a per-token
table, masks and weights from per-length tables (encoding dominates the
faithful mode's run time otherwise).

Example:
    record = PretrainingRecordEncoder(tokenizer, 128, 20).encode(instance)
    records, stats = make_records(documents, tokenizer, options, rng)
    write_round_robin(records, ["a.tfrecord", "b.tfrecord"])
"""

import collections

from tqdm import tqdm

from bert_tf.records import example_bytes as eb
from bert_tf.records.task_schemas import pretraining_schema
from bert_tf.records.tfrecord_file import write_tfrecord_file
from data_prep.pretraining.instances import generate_instances

RecordStats = collections.namedtuple(
  "RecordStats", ["documents", "instances", "masked_tokens"]
)


class _TokenVarints(dict):
  """token -> varint of its id; tokens outside `.vocab` ask the tokenizer."""

  def __init__(self, tokenizer):
    super().__init__((t, eb.varint(i)) for t, i in tokenizer.vocab.items())
    self._tokenizer = tokenizer

  def __missing__(self, token):
    value = eb.varint(self._tokenizer.convert_tokens_to_ids([token])[0])
    self[token] = value
    return value


class PretrainingRecordEncoder:
  """Serializes `TrainingInstance`s to tf.train.Example bytes."""

  def __init__(self, tokenizer, max_seq_length, max_predictions_per_seq):
    self.max_seq_length = max_seq_length
    self.max_predictions_per_seq = max_predictions_per_seq
    self._schema = pretraining_schema(max_seq_length, max_predictions_per_seq)
    self._token_varints = _TokenVarints(tokenizer)
    # Values that only depend on a length, by that length.
    self._input_masks = [
      b"\x01" * n + bytes(max_seq_length - n) for n in range(max_seq_length + 1)
    ]
    self._weights = [
      eb.pack_float32([1.0] * k + [0.0] * (max_predictions_per_seq - k))
      for k in range(max_predictions_per_seq + 1)
    ]

  def _ids(self, tokens):
    return b"".join(map(self._token_varints.__getitem__, tokens))

  def encode(self, instance):
    n = len(instance.tokens)
    pad = self.max_seq_length - n
    k = len(instance.masked_lm_positions)
    mask_pad = self.max_predictions_per_seq - k
    if pad < 0 or mask_pad < 0:
      raise ValueError(
        "instance longer than max_seq_length or max_predictions_per_seq"
      )
    # Padding zeros are one b"\0" varint each; 0/1 ids are their own bytes.
    return self._schema.encode(
      {
        "input_ids": self._ids(instance.tokens) + bytes(pad),
        "input_mask": self._input_masks[n],
        "segment_ids": bytes(instance.segment_ids) + bytes(pad),
        "masked_lm_positions": (
          eb.packed_int64(instance.masked_lm_positions) + bytes(mask_pad)
        ),
        "masked_lm_ids": self._ids(instance.masked_lm_labels) + bytes(mask_pad),
        "masked_lm_weights": self._weights[k],
        "next_sentence_labels": [int(instance.is_random_next)],
      }
    )


def write_round_robin(records, output_files):
  """Writes record i to output_files[i % n], each file atomically."""
  for j, path in enumerate(output_files):
    write_tfrecord_file(path, records[j :: len(output_files)])


def make_records(documents, tokenizer, options, rng, progress=False):
  """The original's instances as serialized examples, in output order.

  Instances are encoded as soon as they are made (a record is a few times
  smaller than a TrainingInstance); the original's final shuffle only
  depends on the count, so shuffling the records gives its order.
  """
  encoder = PretrainingRecordEncoder(
    tokenizer, options.max_seq_length, options.max_predictions_per_seq
  )
  instances = generate_instances(
    documents, list(tokenizer.vocab.keys()), options, rng
  )
  records = []
  masked_tokens = 0
  for instance in tqdm(
    instances,
    unit=" instances",
    desc="instances",
    disable=None if progress else True,
  ):
    records.append(encoder.encode(instance))
    masked_tokens += len(instance.masked_lm_positions)
  rng.shuffle(records)
  return records, RecordStats(len(documents), len(records), masked_tokens)
