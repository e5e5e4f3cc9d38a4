"""data_prep.learn_vocab as a Beam pipeline: word counts per input shard in
parallel, summed per word, then one learner step writes the vocabulary.

Counting (the original BasicTokenizer over every line) is the part that
grows with the corpus; it runs per `documents.Shard` exactly as the single
process runs it per file. The summed counts go to `wordpiece.learn_wordpiece`,
which sorts them first, so the vocabulary is the single-process one byte for
byte, whatever the runner and shard plan.

Example:
    size = learn_vocab_beam(shards, "vocab.txt", True, 8000, 994,
                            "DirectRunner", [])
"""

import functools

from bert_tf.io_utils import atomic_output
from data_prep.beam import pipeline
from data_prep.common.outputs import temp_name
from data_prep.learn_vocab.words import count_shard_words


def _count(shard, do_lower_case):
  counts = count_shard_words(shard, do_lower_case)
  pipeline.counter("shards").inc()
  pipeline.counter("words").inc(sum(counts.values()))
  return counts.items()


def _learn_and_write(word_counts, path, vocab_size, num_unused):
  # pylint: disable-next=g-import-not-at-top
  from data_prep.learn_vocab.wordpiece import learn_wordpiece
  from data_prep.learn_vocab.wordpiece import write_vocab

  vocab = learn_wordpiece(dict(word_counts), vocab_size, num_unused)
  with atomic_output(path) as f:
    write_vocab(vocab, f)
  pipeline.counter("vocab_size").inc(len(vocab))


def learn_vocab_beam(
  shards, output_file, do_lower_case, vocab_size, num_unused, runner, beam_args
):
  """Writes `output_file`; -> the vocabulary size."""
  import apache_beam as beam  # pylint: disable=g-import-not-at-top

  temp = temp_name(output_file)

  def graph(p):
    _ = (
      p
      | "Shards" >> beam.Create(shards)
      | beam.Reshuffle()
      | "CountWords" >> beam.FlatMap(_count, do_lower_case=do_lower_case)
      | "SumPerWord" >> beam.CombinePerKey(sum)
      | "AllCounts" >> beam.combiners.ToList()
      | "Learn"
      >> beam.Map(
        functools.partial(
          _learn_and_write,
          path=temp,
          vocab_size=vocab_size,
          num_unused=num_unused,
        )
      )
    )

  counters = pipeline.run_and_publish(
    graph, runner, beam_args, [temp], [output_file]
  )
  return counters["vocab_size"]
