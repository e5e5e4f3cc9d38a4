"""create_pretraining_data as a Beam pipeline: one output file per element.

The shards are the scalable mode's (`plan_shards`: input files, big ones cut
at blank lines, at least --num_output_shards of them) and each is built as
`shards.build_shard` builds it -- its own `random.Random(shard_seed(
--random_seed, shard index))`, random next sentences from the same shard.
Output file j holds the shards `records.shard_of` gives it, one after the
other, so there are exactly --num_output_shards files (some empty if the
corpus cuts into fewer shards), and with one shard each they are the same
bytes as `--num_workers` for a given seed and shard plan, whatever the
runner.

Example:
    stats, files = write_shards_beam(shards, "out/pt.tfrecord", 4,
                                     tokenizer_args, options, 12345,
                                     "DirectRunner", [])
"""

import functools

from bert_tf.tokenizers.loading import load_tokenizer
from data_prep.beam import pipeline
from data_prep.beam.records import num_shards_for
from data_prep.beam.records import shard_of
from data_prep.common.outputs import shard_names
from data_prep.common.outputs import temp_name
from data_prep.pretraining.records import RecordStats
from data_prep.pretraining.shards import build_shards


def _build_output(tokenizer, task, options, random_seed):
  indexed_shards, path = task
  stats = build_shards(indexed_shards, path, tokenizer, options, random_seed)
  for name, value in stats._asdict().items():
    pipeline.counter(name).inc(value)
  pipeline.counter("shards").inc(len(indexed_shards))


def write_shards_beam(
  shards,
  output_file,
  num_output_shards,
  tokenizer_args,
  options,
  random_seed,
  runner,
  beam_args,
):
  """Builds every shard in a Beam pipeline into exactly
  `num_shards_for(num_output_shards)` files; -> (RecordStats, files)."""
  import apache_beam as beam  # pylint: disable=g-import-not-at-top

  num_files = num_shards_for(num_output_shards)
  outputs = shard_names(output_file, num_files)
  temps = [temp_name(path) for path in outputs]
  groups = [[] for _ in outputs]
  for i, shard in enumerate(shards):
    groups[shard_of(i, len(shards), num_files)].append((i, shard))
  tasks = list(zip(groups, temps))
  build = pipeline.PerWorker(
    functools.partial(_build_output, options=options, random_seed=random_seed),
    load_tokenizer,
    *tokenizer_args,
  )

  def graph(p):
    _ = (
      p
      | "Outputs" >> beam.Create(tasks)
      | beam.Reshuffle()
      | "BuildShards" >> beam.Map(build)
    )

  counters = pipeline.run_and_publish(
    graph, runner, beam_args, temps, outputs, output_file
  )
  return RecordStats(
    *(counters.get(name, 0) for name in RecordStats._fields)
  ), outputs
