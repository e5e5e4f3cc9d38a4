"""data_prep.squad as a Beam pipeline: chunks of paragraphs in parallel.

The examples are cut into the same chunks as the process pool
(`writer.chunk_bounds`, whole paragraphs) and each is featurized by
`writer.convert_chunk`. Consecutive chunks share a shard (`records.shard_of`),
and unique ids continue across chunks in example order (each shard's first
id comes from the feature counts of the chunks before it), so the shards,
concatenated, are the single-process file and sidecar exactly.

Example:
    counts = write_squad_features_beam(
        examples, encoder_args, "eval.tf_record",
        "eval.tf_record.features.jsonl", 4, "DirectRunner", [])
"""

import contextlib

from data_prep.beam import pipeline
from data_prep.beam.records import every_shard
from data_prep.beam.records import num_shards_for
from data_prep.beam.records import shard_of
from data_prep.common.outputs import shard_names
from data_prep.common.outputs import temp_name
from data_prep.squad import writer
from data_prep.squad.features import FIRST_UNIQUE_ID


def _convert(encoder, chunk):
  """(chunk index, examples, first example index) -> (chunk index,
  converted features)."""
  index, examples, first_index = chunk
  converted = writer.convert_chunk(encoder, first_index, examples)
  pipeline.counter("examples").inc(len(examples))
  pipeline.counter("features").inc(len(converted.records))
  return index, converted


class _WriteShard:
  """Map body: (shard, [(chunk index, converted)]) -> one TFRecord (and
  sidecar) shard under its temporary name."""

  def __init__(self, encoder_args, records, sidecars):
    self.encoder_args = encoder_args
    self.records = records
    self.sidecars = sidecars

  def __call__(self, shard_and_chunks, counts):
    shard, chunks = shard_and_chunks
    chunks = sorted(chunks, key=lambda chunk: chunk[0])
    first = chunks[0][0] if chunks else 0  # An empty shard: no ids.
    unique_id = FIRST_UNIQUE_ID + sum(
      count for index, count in counts if index < first
    )
    with contextlib.ExitStack() as stack:
      out = writer.open_outputs(
        stack,
        self.records[shard],
        self.sidecars[shard] if self.sidecars else None,
        self.encoder_args,
      )
      for _, converted in chunks:
        unique_id = out.write(converted, unique_id)


def write_squad_features_beam(
  examples,
  encoder_args,
  output_file,
  features_file,
  num_output_shards,
  runner,
  beam_args,
):
  """Writes `<output_file>-SSSSS-of-NNNNN` (and the sidecar's shards);
  -> (writer.Counts, output files)."""
  import apache_beam as beam  # pylint: disable=g-import-not-at-top

  writer.new_encoder(*encoder_args)  # bad settings or vocab: fail here
  bounds = writer.chunk_bounds(examples)
  num_shards = num_shards_for(num_output_shards)
  records = shard_names(output_file, num_shards)
  sidecars = shard_names(features_file, num_shards) if features_file else []
  finals = records + sidecars
  temps = [temp_name(path) for path in finals]
  chunks = [
    (i, examples[start:stop], start) for i, (start, stop) in enumerate(bounds)
  ]
  write = _WriteShard(encoder_args, temps[:num_shards], temps[num_shards:])

  def graph(p):
    converted = (
      p
      | "Chunks" >> beam.Create(chunks)
      | beam.Reshuffle()
      | "Convert"
      >> beam.Map(
        pipeline.PerWorker(_convert, writer.new_encoder, *encoder_args)
      )
    )
    counts = converted | "Count" >> beam.Map(
      lambda c: (c[0], len(c[1].records))
    )
    keyed = converted | "ToShard" >> beam.Map(
      lambda c: (shard_of(c[0], len(chunks), num_shards), c)
    )
    _ = every_shard(keyed, num_shards) | "WriteShard" >> beam.Map(
      write, counts=beam.pvalue.AsList(counts)
    )

  counters = pipeline.run_and_publish(
    graph,
    runner,
    beam_args,
    temps,
    finals,
    *[f for f in (output_file, features_file) if f],
  )
  return writer.Counts(len(examples), counters.get("features", 0)), finals
