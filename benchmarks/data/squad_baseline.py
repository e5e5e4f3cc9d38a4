"""A straightforward port of the original SQuAD reading and featurization.

The benchmark's reference point: `read_squad_examples`' character loop
(prediction files), then `convert_examples_to_features` in one process with
the uncached tokenizer, every context re-tokenized for every question,
`_check_is_max_context` scanning every span for every token, and
tf.train.Example protos as the original's FeatureWriter builds them. Only for
benchmarks/data/squad_features.py.
"""

import collections
import json

import tensorflow as tf

from data_prep.squad.example import SquadExample
from data_prep.squad.features import improve_answer_span
from data_prep.squad.features import InputFeatures

_DocSpan = collections.namedtuple("DocSpan", ["start", "length"])


def read_eval_examples(input_file):
  """The original `read_squad_examples(input_file, is_training=False)`."""
  with open(input_file, "r", encoding="utf-8") as reader:
    input_data = json.load(reader)["data"]
  examples = []
  for entry in input_data:
    for paragraph in entry["paragraphs"]:
      doc_tokens = []
      char_to_word_offset = []  # unused without answers, built all the same
      prev_is_whitespace = True
      for c in paragraph["context"]:
        if c in (" ", "\t", "\r", "\n") or ord(c) == 0x202F:
          prev_is_whitespace = True
        else:
          if prev_is_whitespace:
            doc_tokens.append(c)
          else:
            doc_tokens[-1] += c
          prev_is_whitespace = False
        char_to_word_offset.append(len(doc_tokens) - 1)
      for qa in paragraph["qas"]:
        examples.append(SquadExample(qa["id"], qa["question"], doc_tokens))
  return examples


def _check_is_max_context(doc_spans, cur_span_index, position):
  best_score = None
  best_span_index = None
  for span_index, doc_span in enumerate(doc_spans):
    end = doc_span.start + doc_span.length - 1
    if position < doc_span.start or position > end:
      continue
    score = min(position - doc_span.start, end - position) + 0.01 * (
      doc_span.length
    )
    if best_score is None or score > best_score:
      best_score = score
      best_span_index = span_index
  return cur_span_index == best_span_index


def _answer_span(example, all_doc_tokens, orig_to_tok_index, tokenizer):
  if example.is_impossible:
    return -1, -1
  start = orig_to_tok_index[example.start_position]
  if example.end_position < len(example.doc_tokens) - 1:
    end = orig_to_tok_index[example.end_position + 1] - 1
  else:
    end = len(all_doc_tokens) - 1
  return improve_answer_span(
    all_doc_tokens, start, end, tokenizer, example.orig_answer_text
  )


def _spans(num_tokens, max_tokens_for_doc, doc_stride):
  spans = []
  start_offset = 0
  while start_offset < num_tokens:
    length = min(num_tokens - start_offset, max_tokens_for_doc)
    spans.append(_DocSpan(start_offset, length))
    if start_offset + length == num_tokens:
      break
    start_offset += min(length, doc_stride)
  return spans


def baseline_features(
  examples, tokenizer, max_seq_length, doc_stride, max_query_length, is_training
):
  """Yields InputFeatures exactly as the original computes them."""
  unique_id = 1000000000
  for example_index, example in enumerate(examples):
    query_tokens = tokenizer.tokenize(example.question_text)[:max_query_length]
    tok_to_orig_index, orig_to_tok_index, all_doc_tokens = [], [], []
    for i, token in enumerate(example.doc_tokens):
      orig_to_tok_index.append(len(all_doc_tokens))
      for sub_token in tokenizer.tokenize(token):
        tok_to_orig_index.append(i)
        all_doc_tokens.append(sub_token)
    if is_training:
      tok_start, tok_end = _answer_span(
        example, all_doc_tokens, orig_to_tok_index, tokenizer
      )
    doc_spans = _spans(
      len(all_doc_tokens), max_seq_length - len(query_tokens) - 3, doc_stride
    )
    for doc_span_index, doc_span in enumerate(doc_spans):
      tokens = ["[CLS]"] + query_tokens + ["[SEP]"]
      segment_ids = [0] * len(tokens)
      token_to_orig_map, token_is_max_context = {}, {}
      for i in range(doc_span.length):
        split_token_index = doc_span.start + i
        token_to_orig_map[len(tokens)] = tok_to_orig_index[split_token_index]
        token_is_max_context[len(tokens)] = _check_is_max_context(
          doc_spans, doc_span_index, split_token_index
        )
        tokens.append(all_doc_tokens[split_token_index])
        segment_ids.append(1)
      tokens.append("[SEP]")
      segment_ids.append(1)
      input_ids = tokenizer.convert_tokens_to_ids(tokens)
      input_mask = [1] * len(input_ids)
      while len(input_ids) < max_seq_length:
        input_ids.append(0)
        input_mask.append(0)
        segment_ids.append(0)
      feature = InputFeatures(
        unique_id,
        example_index,
        doc_span_index,
        tokens,
        token_to_orig_map,
        token_is_max_context,
        input_ids,
        input_mask,
        segment_ids,
        is_impossible=example.is_impossible,
      )
      if is_training:
        doc_start = doc_span.start
        doc_end = doc_span.start + doc_span.length - 1
        inside = (
          not example.is_impossible
          and tok_start >= doc_start
          and tok_end <= doc_end
        )
        offset = len(query_tokens) + 2 - doc_start
        feature.start_position = tok_start + offset if inside else 0
        feature.end_position = tok_end + offset if inside else 0
      yield feature
      unique_id += 1


def serialize(feature, is_training):
  """The original FeatureWriter's tf.train.Example."""

  def ints(values):
    return tf.train.Feature(int64_list=tf.train.Int64List(value=list(values)))

  features = collections.OrderedDict()
  features["unique_ids"] = ints([feature.unique_id])
  features["input_ids"] = ints(feature.input_ids)
  features["input_mask"] = ints(feature.input_mask)
  features["segment_ids"] = ints(feature.segment_ids)
  if is_training:
    features["start_positions"] = ints([feature.start_position])
    features["end_positions"] = ints([feature.end_position])
    features["is_impossible"] = ints([int(feature.is_impossible)])
  return tf.train.Example(
    features=tf.train.Features(feature=features)
  ).SerializeToString()
