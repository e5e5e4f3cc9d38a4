"""data_prep.classifier as a Beam pipeline: `features.RecordEncoder` (the
single-process step) on chunks of 1,000 examples, written by
`records.write_record_shards`.

Example:
    files = write_records_beam(
        examples, (labels, 128, ("vocab.txt", True, None), False),
        "out/train.tf_record", 4, "DirectRunner", [])
"""

from bert_tf.tokenizers.loading import load_tokenizer
from data_prep.beam.pipeline import PerWorker
from data_prep.beam.records import chunked
from data_prep.beam.records import write_record_shards
from data_prep.classifier.features import RecordEncoder

_CHUNK_SIZE = 1000  # examples per element


def _encoder(label_list, max_seq_length, tokenizer_args, multi_label):
  return RecordEncoder(
    label_list, max_seq_length, load_tokenizer(*tokenizer_args), multi_label
  )


def _encode(encoder, examples):
  return [encoder(example) for example in examples]


def write_records_beam(
  examples, encoder_args, output_file, num_output_shards, runner, beam_args
):
  """Writes `<output_file>-SSSSS-of-NNNNN`; -> the file names.

  `encoder_args`: (label_list, max_seq_length, tokenizer_args, multi_label),
  `tokenizer_args` being `load_tokenizer`'s.
  """
  return write_record_shards(
    chunked(examples, _CHUNK_SIZE),
    PerWorker(_encode, _encoder, *encoder_args),
    output_file,
    num_output_shards,
    runner,
    beam_args,
  )[1]
