"""Multiple-choice featurization and TFRecords, without TensorFlow.

Each choice i is one BERT input, as in the BERT paper's SWAG setup:
    [CLS] context [SEP] prefix + " " + ending_i [SEP]
truncated like run_classifier's pairs (pop the last piece of the longer
side; data_prep/common/sequence_pairs.py) and zero-padded to max_seq_length.
One record holds all choices of an example, choice after choice:
    input_ids, input_mask, segment_ids  int64 [num_choices * max_seq_length]
    label_ids                           int64 (the right ending; 0 if unlabeled)
    is_real_example                     int64 (0: TPU batch padding)
`bert_tf.records.task_schemas.multiple_choice_schema` reads them back as
[num_choices, max_seq_length].

Example:
    tokenizer = tokenization.FullTokenizer("vocab.txt", do_lower_case=True)
    count = write_records(examples, 128, tokenizer, "out/train.tf_record")
"""

import collections

import tqdm

from bert_tf.io_utils import InputError
from bert_tf.records.task_schemas import multiple_choice_schema
from bert_tf.records.tfrecord_file import write_tfrecord_file
from data_prep.common.sequence_pairs import pack_tokens

# input_ids / input_mask / segment_ids: one padded list per choice.
MultipleChoiceFeatures = collections.namedtuple(
  "MultipleChoiceFeatures",
  "input_ids input_mask segment_ids label_id is_real_example",
)


def convert_example(example, max_seq_length, tokenizer):
  """The MultipleChoiceFeatures of one MultipleChoiceExample."""
  context = tokenizer.tokenize(example.context)
  ids, masks, segments = [], [], []
  for ending in example.endings:
    # pack_tokens truncates in place: every choice gets a fresh context.
    tokens, segment_ids = pack_tokens(
      list(context),
      tokenizer.tokenize(example.prefix + " " + ending),
      max_seq_length,
    )
    padding = [0] * (max_seq_length - len(tokens))
    ids.append(tokenizer.convert_tokens_to_ids(tokens) + padding)
    masks.append([1] * len(tokens) + padding)
    segments.append(segment_ids + padding)
  return MultipleChoiceFeatures(ids, masks, segments, example.label, 1)


def padding_features(num_choices, max_seq_length):
  """All zeros, label 0, is_real_example 0 (the original's padding rows)."""
  zeros = [[0] * max_seq_length] * num_choices
  return MultipleChoiceFeatures(zeros, zeros, zeros, 0, 0)


def record_bytes(features):
  """Serialized tf.train.Example of one example: the record encoding."""

  def flat(rows):
    return [value for row in rows for value in row]

  schema = multiple_choice_schema(
    len(features.input_ids), len(features.input_ids[0])
  )
  # Mask and segment values are 0/1: their varints are the bytes themselves.
  return schema.encode(
    {
      "input_ids": flat(features.input_ids),
      "input_mask": bytes(flat(features.input_mask)),
      "segment_ids": bytes(flat(features.segment_ids)),
      "label_ids": features.label_id,
      "is_real_example": features.is_real_example,
    }
  )


def write_records(
  examples, max_seq_length, tokenizer, output_file, pad_to_multiple_of=None
):
  """Featurizes `examples` (same number of choices) into a TFRecord file.

  Args:
    examples: MultipleChoiceExamples, e.g. from `examples.read_examples`.
    max_seq_length: padded length of each choice; at least 3.
    tokenizer: a FullTokenizer.
    output_file: TFRecord path, written atomically.
    pad_to_multiple_of: append padding records until the count is a
      multiple of it (eval/predict batch size on TPU, as the original).

  Returns:
    The number of records written, padding included.
  """
  if max_seq_length < 3:
    raise InputError("--max_seq_length=%d: must be at least 3" % max_seq_length)
  records = [
    record_bytes(convert_example(e, max_seq_length, tokenizer))
    for e in tqdm.tqdm(examples, desc="featurize", unit="ex", disable=None)
  ]
  if pad_to_multiple_of:
    padding = record_bytes(
      padding_features(len(examples[0].endings), max_seq_length)
    )
    records += [padding] * (-len(records) % pad_to_multiple_of)
  write_tfrecord_file(output_file, records)
  return len(records)
