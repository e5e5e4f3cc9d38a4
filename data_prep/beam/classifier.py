"""data_prep.classifier as a Beam pipeline: chunks of examples in parallel.

Each chunk of examples is encoded by `features.RecordEncoder`, the
single-process step; chunk i goes to output shard i * N // chunks in order,
so the shards, concatenated, are the single-process file.

Example:
    files = write_records_beam(examples, encoder_args, "out/train.tf_record",
                               4, "DirectRunner", [])
"""

from bert_tf.records.tfrecord_file import tfrecord_writer
from bert_tf.tokenizers import tokenization
from data_prep.beam import pipeline
from data_prep.classifier.features import RecordEncoder
from data_prep.common.outputs import publish, remove, shard_names, temp_name

_CHUNK_SIZE = 1000  # examples per element


class _Encode:
  """Map body: (chunk index, examples) -> (chunk index, records)."""

  def __init__(self, encoder_args):
    self.encoder_args = encoder_args  # label_list, max_seq_length, vocab...
    self._encode = None

  def __call__(self, chunk):
    if self._encode is None:
      label_list, max_seq_length, vocab_file, do_lower_case, multi = (
          self.encoder_args)
      self._encode = RecordEncoder(
          label_list, max_seq_length,
          tokenization.FullTokenizer(vocab_file, do_lower_case), multi)
    index, examples = chunk
    pipeline.counter("examples").inc(len(examples))
    return index, [self._encode(example) for example in examples]


def _write_shard(paths):
  def write(shard_and_chunks):
    shard, chunks = shard_and_chunks
    with tfrecord_writer(paths[shard]) as writer:
      for _, records in sorted(chunks, key=lambda chunk: chunk[0]):
        for record in records:
          writer.write(record)
  return write


def write_records_beam(examples, encoder_args, output_file,
                       num_output_shards, runner, beam_args):
  """Writes `<output_file>-SSSSS-of-NNNNN`; -> the file names.

  `encoder_args`: (label_list, max_seq_length, vocab_file, do_lower_case,
  multi_label).
  """
  import apache_beam as beam  # pylint: disable=g-import-not-at-top
  chunks = [(i, examples[start:start + _CHUNK_SIZE]) for i, start in
            enumerate(range(0, len(examples), _CHUNK_SIZE))] or [(0, [])]
  num_shards = max(1, min(num_output_shards or 1, len(chunks)))
  finals = shard_names(output_file, num_shards)
  temps = [temp_name(path) for path in finals]

  def graph(p):
    _ = (p | "Chunks" >> beam.Create(chunks) | beam.Reshuffle()
         | "Encode" >> beam.Map(_Encode(encoder_args))
         | "ToShard" >> beam.Map(
             lambda c: (c[0] * num_shards // len(chunks), c))
         | beam.GroupByKey()
         | "WriteShard" >> beam.Map(_write_shard(temps)))

  try:
    pipeline.run(graph, runner, beam_args)
  except BaseException:
    remove(temps)
    raise
  publish(temps, finals, output_file)
  return finals
