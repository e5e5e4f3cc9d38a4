"""The Beam driver of the per-example data jobs (classifier, NER, multiple
choice): chunks of examples -> record bytes -> ordered output shards.

`encode(chunk) -> [serialized records]` is the job's single-process step
(a `pipeline.PerWorker`: its tokenizer is loaded once per worker). Chunk i
goes to output shard `shard_of(i, ...)`, in chunk order, so the shards,
concatenated, are the single-process file. `--num_output_shards=N` writes
exactly N files, as Beam's own sinks do: with fewer chunks than N some
shards are empty (`every_shard`).

Example:
    files = write_record_shards(chunked(examples, 1000), encode,
                                "out/train.tf_record", 4, "DirectRunner", [])
"""

from bert_tf.records.tfrecord_file import tfrecord_writer
from data_prep.beam import pipeline
from data_prep.common.outputs import shard_names
from data_prep.common.outputs import temp_name


def chunked(items, size):
  """`items` in lists of `size` (the last one shorter)."""
  return [items[start : start + size] for start in range(0, len(items), size)]


def num_shards_for(num_output_shards):
  """The number of output files of every Beam driver: --num_output_shards
  exactly (default 1), empty shards included."""
  return num_output_shards or 1


def shard_of(chunk_index, num_chunks, num_shards):
  """The shard of a chunk: consecutive chunks share a shard, in order."""
  return chunk_index * num_shards // num_chunks


def _indexed(encode):
  def run(indexed_chunk):
    index, chunk = indexed_chunk
    records = encode(chunk)
    pipeline.counter("examples").inc(len(chunk))
    pipeline.counter("records").inc(len(records))
    return index, records

  return run


def every_shard(keyed, num_shards):
  """`(shard, value)` pairs -> `(shard, [values])` for every shard in
  0..num_shards-1, those without values too (GroupByKey alone would skip
  them, and their files would be missing)."""
  import apache_beam as beam  # pylint: disable=g-import-not-at-top

  keys = keyed.pipeline | "AllShards" >> beam.Create(
    [(shard, None) for shard in range(num_shards)]
  )
  return (
    (keyed, keys)
    | "WithAllShards" >> beam.Flatten()
    | beam.GroupByKey()
    | "DropMarkers"
    >> beam.MapTuple(
      lambda shard, values: (shard, [v for v in values if v is not None])
    )
  )


def _write_shard(paths):
  def write(shard_and_chunks):
    shard, chunks = shard_and_chunks
    with tfrecord_writer(paths[shard]) as writer:
      for _, records in sorted(chunks, key=lambda chunk: chunk[0]):
        for record in records:
          writer.write(record)

  return write


def write_record_shards(
  chunks, encode, output_file, num_output_shards, runner, beam_args
):
  """Writes `<output_file>-SSSSS-of-NNNNN`; -> (counters, file names)."""
  import apache_beam as beam  # pylint: disable=g-import-not-at-top

  chunks = list(enumerate(chunks)) or [(0, [])]
  num_shards = num_shards_for(num_output_shards)
  finals = shard_names(output_file, num_shards)
  temps = [temp_name(path) for path in finals]

  def graph(p):
    keyed = (
      p
      | "Chunks" >> beam.Create(chunks)
      | beam.Reshuffle()
      | "Encode" >> beam.Map(_indexed(encode))
      | "ToShard"
      >> beam.Map(lambda c: (shard_of(c[0], len(chunks), num_shards), c))
    )
    _ = every_shard(keyed, num_shards) | "WriteShard" >> beam.Map(
      _write_shard(temps)
    )

  counters = pipeline.run_and_publish(
    graph, runner, beam_args, temps, finals, output_file
  )
  return counters, finals
