"""Classifier featurization and TFRecords, as the original run_classifier.

`convert_single_example` reproduces the original exactly: pairs are cut to
max_seq_length - 3 word pieces by popping the last piece of the longer side
(b on a tie), singles keep the first max_seq_length - 2; the layout is
`[CLS] a [SEP] b [SEP]` with segment ids 0 up to the first [SEP] and 1 after
(data_prep/common/sequence_pairs.py); everything is zero-padded. Padding
examples become all zeros, label 0 and is_real_example 0. Regression labels are
written as floats; multi-label examples (a tuple of labels) as a 0/1 int64
vector over the label list. Records follow `task_schemas.classifier_schema`
and are written without TensorFlow.

Example:
    tokenizer = tokenization.FullTokenizer("vocab.txt", do_lower_case=True)
    n = write_examples_to_tfrecord(examples, processor.get_labels(), 128,
                                   tokenizer, "out/train.tf_record")
"""

import collections

from absl import logging
import tqdm

from bert_tf.io_utils import InputError
from bert_tf.records.task_schemas import classifier_schema
from bert_tf.records.tfrecord_file import tfrecord_writer
from data_prep.classifier.example import PaddingInputExample
from data_prep.common.sequence_pairs import pack_tokens

InputFeatures = collections.namedtuple(
  "InputFeatures", "input_ids input_mask segment_ids label_id is_real_example"
)

_LOGGED_EXAMPLES = 5


def _label_id(example, label_map, multi_label):
  """Index into the label list, the float score when label_map is None, or
  the 0/1 vector of a multi-label example."""
  if label_map is None:
    return float(example.label)
  labels = example.label if multi_label else [example.label]
  for label in labels:
    if label not in label_map:
      raise InputError(
        "example %s: unknown label %r (labels: %s)"
        % (example.guid, label, ", ".join(label_map))
      )
  if not multi_label:
    return label_map[example.label]
  return [int(label in labels) for label in label_map]


def convert_single_example(
  example, label_list, max_seq_length, tokenizer, multi_label=False
):
  """Returns InputFeatures; `label_list` None means a regression task."""
  if isinstance(example, PaddingInputExample):
    zeros = [0] * max_seq_length
    if multi_label:
      label = [0] * len(label_list)
    else:
      label = 0.0 if label_list is None else 0
    return InputFeatures(zeros, zeros, zeros, label, 0)
  label_map = (
    None
    if label_list is None
    else {label: i for i, label in enumerate(label_list)}
  )
  tokens_b = tokenizer.tokenize(example.text_b) if example.text_b else None
  tokens, segment_ids = pack_tokens(
    tokenizer.tokenize(example.text_a), tokens_b, max_seq_length
  )
  input_ids = tokenizer.convert_tokens_to_ids(tokens)
  padding = [0] * (max_seq_length - len(input_ids))
  return InputFeatures(
    input_ids + padding,
    [1] * len(input_ids) + padding,
    segment_ids + padding,
    _label_id(example, label_map, multi_label),
    1,
  )


def padded_examples(examples, pad_to_multiple_of=None):
  """`examples` plus PaddingInputExamples up to a multiple of the size."""
  examples = list(examples)
  if pad_to_multiple_of:
    extra = -len(examples) % pad_to_multiple_of
    examples.extend(PaddingInputExample() for _ in range(extra))
  return examples


def _record_values(features):
  """The record's values by the original's five feature names."""
  return {
    "input_ids": features.input_ids,
    "input_mask": features.input_mask,
    "segment_ids": features.segment_ids,
    "label_ids": features.label_id,
    "is_real_example": int(features.is_real_example),
  }


def _log_example(example, features, tokenizer):
  # At --verbosity=1: the original's dumps were 90 of an MRPC run's lines.
  logging.vlog(
    1,
    "*** Example ***\nguid: %s\ntokens: %s\ninput_ids: %s\n"
    "segment_ids: %s\nlabel: %s (id = %s)",
    example.guid,
    " ".join(
      tokenizer.convert_ids_to_tokens([i for i in features.input_ids if i])
    ),
    " ".join(map(str, features.input_ids)),
    " ".join(map(str, features.segment_ids)),
    getattr(example, "label", None),
    features.label_id,
  )


def write_examples_to_tfrecord(
  examples,
  label_list,
  max_seq_length,
  tokenizer,
  output_file,
  pad_to_multiple_of=None,
  multi_label=False,
):
  """Streams the examples' features to `output_file` (atomically).

  Args:
    examples: InputExamples (label strings, or floats for regression).
    label_list: labels in id order; None for regression (float label_ids).
    max_seq_length: padded length; at least 3.
    tokenizer: a FullTokenizer (or anything with tokenize and
      convert_tokens_to_ids / convert_ids_to_tokens).
    output_file: TFRecord path.
    pad_to_multiple_of: if set, append PaddingInputExamples until the record
      count is a multiple of it (the original does this for eval/predict on
      TPU, with the batch size).
    multi_label: examples carry label tuples; label_ids is a 0/1 vector.

  Returns:
    The number of records written, padding included.
  """
  encode = RecordEncoder(label_list, max_seq_length, tokenizer, multi_label)
  examples = padded_examples(examples, pad_to_multiple_of)
  with tfrecord_writer(output_file) as writer:
    for i, example in enumerate(
      tqdm.tqdm(examples, desc="featurize", unit="ex", disable=None)
    ):
      writer.write(encode(example, log=i < _LOGGED_EXAMPLES))
  return len(examples)


class RecordEncoder:
  """example -> serialized record: the per-example step of both drivers
  (`write_examples_to_tfrecord`, data_prep/beam/classifier.py)."""

  def __init__(self, label_list, max_seq_length, tokenizer, multi_label=False):
    if max_seq_length < 3:
      raise InputError(
        "--max_seq_length=%d: must be at least 3" % max_seq_length
      )
    self.label_list = label_list
    self.max_seq_length = max_seq_length
    self.tokenizer = tokenizer
    self.multi_label = multi_label
    self.schema = classifier_schema(
      max_seq_length,
      is_regression=label_list is None,
      num_labels=len(label_list) if multi_label else None,
    )

  def __call__(self, example, log=False):
    features = convert_single_example(
      example,
      self.label_list,
      self.max_seq_length,
      self.tokenizer,
      self.multi_label,
    )
    if log:
      _log_example(example, features, self.tokenizer)
    return self.schema.encode(_record_values(features))
