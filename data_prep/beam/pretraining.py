"""create_pretraining_data as a Beam pipeline: one shard per element.

The shards are the scalable mode's (`plan_shards`: input files, big ones cut
at blank lines) and each runs `shards.build_shard` -- its own
`random.Random(shard_seed(--random_seed, shard index))`, random next
sentences from the same shard -- so the output is the same bytes as
`--num_workers` for a given seed and shard plan, whatever the runner.

Example:
    stats, files = write_shards_beam(shards, "out/pt.tfrecord",
                                     tokenizer_args, options, 12345,
                                     "DirectRunner", [])
"""

import functools

from bert_tf.tokenizers.loading import load_tokenizer
from data_prep.beam import pipeline
from data_prep.common.outputs import shard_names, temp_name
from data_prep.pretraining.records import RecordStats
from data_prep.pretraining.shards import build_shard


def _build_shard(tokenizer, task, options, random_seed):
  index, shard, path = task
  stats = build_shard(index, shard, path, tokenizer, options, random_seed)
  for name, value in stats._asdict().items():
    pipeline.counter(name).inc(value)
  pipeline.counter("shards").inc()


def write_shards_beam(shards, output_file, tokenizer_args, options,
                      random_seed, runner, beam_args):
  """Builds every shard in a Beam pipeline; -> (RecordStats, files)."""
  import apache_beam as beam  # pylint: disable=g-import-not-at-top
  outputs = shard_names(output_file, len(shards))
  temps = [temp_name(path) for path in outputs]
  tasks = [(i, shard, temps[i]) for i, shard in enumerate(shards)]
  build = pipeline.PerWorker(
      functools.partial(_build_shard, options=options,
                        random_seed=random_seed),
      load_tokenizer, *tokenizer_args)

  def graph(p):
    _ = (p | "Shards" >> beam.Create(tasks) | beam.Reshuffle()
         | "BuildShard" >> beam.Map(build))

  counters = pipeline.run_and_publish(graph, runner, beam_args, temps,
                                      outputs, output_file)
  return RecordStats(*(counters.get(name, 0)
                       for name in RecordStats._fields)), outputs
