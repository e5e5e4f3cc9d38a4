"""The original scripts' TFRecord layouts, defined once for writing
(data_prep, without TensorFlow) and reading (`training.input_pipeline`).

Feature names, types and shapes are the original's:
  run_squad FeatureWriter       unique_ids, input_ids, input_mask,
                                segment_ids (+ start_positions, end_positions,
                                is_impossible when training)
  run_classifier                input_ids, input_mask, segment_ids,
                                label_ids (float for regression,
                                [num_labels] 0/1 when multi-label),
                                is_real_example
  create_pretraining_data       input_ids, input_mask, segment_ids,
                                masked_lm_positions, masked_lm_ids,
                                masked_lm_weights (float),
                                next_sentence_labels ([1])
New tasks, in the same conventions:
  run_ner                       input_ids, input_mask, segment_ids,
                                label_ids, label_weights (float: 1 on the
                                first piece of each predicted word)
  run_multiple_choice           input_ids, input_mask, segment_ids
                                ([choices, seq_length] each), label_ids,
                                is_real_example

Example:
    schema = squad_schema(384, is_training=False)
    record = schema.encode({"unique_ids": 1000000000, "input_ids": ids, ...})
    spec = schema.parse_spec()
"""

from bert_tf.records.schema import Field
from bert_tf.records.schema import FLOAT32
from bert_tf.records.schema import INT64
from bert_tf.records.schema import Schema


def _sequences(seq_length):
  return [
    Field(name, INT64, seq_length)
    for name in ("input_ids", "input_mask", "segment_ids")
  ]


def squad_schema(max_seq_length, is_training):
  """run_squad.py records. The original's input_fn never reads
  `is_impossible`; its FeatureWriter writes it for training."""
  fields = [Field("unique_ids", INT64)] + _sequences(max_seq_length)
  if is_training:
    fields += [
      Field(name, INT64)
      for name in ("start_positions", "end_positions", "is_impossible")
    ]
  return Schema(fields)


def classifier_schema(max_seq_length, is_regression=False, num_labels=None):
  """run_classifier.py records; regression tasks write float labels,
  multi-label ones (new; `num_labels` set) a 0/1 vector over the labels."""
  return Schema(
    _sequences(max_seq_length)
    + [
      Field("label_ids", FLOAT32 if is_regression else INT64, num_labels),
      Field("is_real_example", INT64),
    ]
  )


def pretraining_schema(max_seq_length, max_predictions_per_seq):
  """create_pretraining_data.py records."""
  return Schema(
    _sequences(max_seq_length)
    + [
      Field("masked_lm_positions", INT64, max_predictions_per_seq),
      Field("masked_lm_ids", INT64, max_predictions_per_seq),
      Field("masked_lm_weights", FLOAT32, max_predictions_per_seq),
      Field("next_sentence_labels", INT64, 1),
    ]
  )


def ner_schema(max_seq_length):
  """run_ner.py records: one tag per word piece, weighted where scored."""
  return Schema(
    _sequences(max_seq_length)
    + [
      Field("label_ids", INT64, max_seq_length),
      Field("label_weights", FLOAT32, max_seq_length),
    ]
  )


def multiple_choice_schema(num_choices, max_seq_length):
  """run_multiple_choice.py records: every choice of an example."""
  shape = (num_choices, max_seq_length)
  return Schema(
    [
      Field(name, INT64, shape)
      for name in ("input_ids", "input_mask", "segment_ids")
    ]
    + [Field("label_ids", INT64), Field("is_real_example", INT64)]
  )
