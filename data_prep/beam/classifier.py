"""data_prep.classifier as a Beam pipeline: `features.RecordEncoder` (the
single-process step) on chunks of 1,000 examples, written by
`records.write_record_shards`.

Example:
    files = write_records_beam(examples, encoder_args, "out/train.tf_record",
                               4, "DirectRunner", [])
"""

from bert_tf.tokenizers import tokenization
from data_prep.beam.records import write_record_shards
from data_prep.classifier.features import RecordEncoder

_CHUNK_SIZE = 1000  # examples per element


class _Encode:
  """A chunk of examples -> records; one tokenizer per worker."""

  def __init__(self, encoder_args):
    self.encoder_args = encoder_args
    self._encode = None

  def __call__(self, examples):
    if self._encode is None:
      label_list, max_seq_length, vocab_file, do_lower_case, multi = (
          self.encoder_args)
      self._encode = RecordEncoder(
          label_list, max_seq_length,
          tokenization.FullTokenizer(vocab_file, do_lower_case), multi)
    return [self._encode(example) for example in examples]


def write_records_beam(examples, encoder_args, output_file,
                       num_output_shards, runner, beam_args):
  """Writes `<output_file>-SSSSS-of-NNNNN`; -> the file names.

  `encoder_args`: (label_list, max_seq_length, vocab_file, do_lower_case,
  multi_label).
  """
  chunks = [examples[start:start + _CHUNK_SIZE]
            for start in range(0, len(examples), _CHUNK_SIZE)]
  return write_record_shards(chunks, _Encode(encoder_args), output_file,
                             num_output_shards, runner, beam_args)[1]
