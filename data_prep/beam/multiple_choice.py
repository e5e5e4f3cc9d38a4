"""data_prep.multiple_choice as a Beam pipeline: `features.convert_example`
+ `record_bytes` (the single-process step) on chunks of 1,000 examples,
written by `records.write_record_shards`.

Example:
    files = write_records_beam(examples, tokenizer_args, 128,
                               "out/train.tf_record", 4, "DirectRunner", [])
"""

from bert_tf.tokenizers.loading import load_tokenizer
from data_prep.beam.records import write_record_shards
from data_prep.multiple_choice.features import convert_example
from data_prep.multiple_choice.features import record_bytes

_CHUNK_SIZE = 1000


class _Encode:
  """A chunk of examples -> records; one tokenizer per worker."""

  def __init__(self, tokenizer_args, max_seq_length):
    self.tokenizer_args = tokenizer_args
    self.max_seq_length = max_seq_length
    self._tokenizer = None

  def __call__(self, examples):
    if self._tokenizer is None:
      self._tokenizer = load_tokenizer(*self.tokenizer_args)
    return [record_bytes(convert_example(e, self.max_seq_length,
                                         self._tokenizer))
            for e in examples]


def write_records_beam(examples, tokenizer_args, max_seq_length, output_file,
                       num_output_shards, runner, beam_args):
  """Writes `<output_file>-SSSSS-of-NNNNN`; -> the file names."""
  chunks = [examples[start:start + _CHUNK_SIZE]
            for start in range(0, len(examples), _CHUNK_SIZE)]
  return write_record_shards(chunks, _Encode(tokenizer_args, max_seq_length),
                             output_file, num_output_shards, runner,
                             beam_args)[1]
