"""data_prep.multiple_choice as a Beam pipeline: `features.convert_example`
+ `record_bytes` (the single-process step) on chunks of 1,000 examples,
written by `records.write_record_shards`.

Example:
    files = write_records_beam(examples, tokenizer_args, 128,
                               "out/train.tf_record", 4, "DirectRunner", [])
"""

import functools

from bert_tf.tokenizers.loading import load_tokenizer
from data_prep.beam.pipeline import PerWorker
from data_prep.beam.records import chunked
from data_prep.beam.records import write_record_shards
from data_prep.multiple_choice.features import convert_example
from data_prep.multiple_choice.features import record_bytes

_CHUNK_SIZE = 1000


def _encode(tokenizer, examples, max_seq_length):
  return [
    record_bytes(convert_example(e, max_seq_length, tokenizer))
    for e in examples
  ]


def write_records_beam(
  examples,
  tokenizer_args,
  max_seq_length,
  output_file,
  num_output_shards,
  runner,
  beam_args,
):
  """Writes `<output_file>-SSSSS-of-NNNNN`; -> the file names."""
  encode = PerWorker(
    functools.partial(_encode, max_seq_length=max_seq_length),
    load_tokenizer,
    *tokenizer_args,
  )
  return write_record_shards(
    chunked(examples, _CHUNK_SIZE),
    encode,
    output_file,
    num_output_shards,
    runner,
    beam_args,
  )[1]
