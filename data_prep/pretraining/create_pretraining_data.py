r"""Raw text -> masked-LM/next-sentence pre-training TFRecords.

The original `create_pretraining_data.py` flags and defaults. With the
default `--num_workers=0` the output is the original's, instance for instance
and in the same order (Python 3 `random`), round-robin over the comma-separated
`--output_file`s. `--num_workers=N` (N >= 1) switches to the scalable mode
(see `pretraining_shards`): shards in N processes, one output file per shard
named `<output_file>-0000i-of-0000K`, deterministic for a seed and worker
count but not the original's order. `--runner=DirectRunner` (or Dataflow,
Flink, Spark; other Beam options pass through) runs the same shards as an
Apache Beam pipeline (data_prep/beam/pretraining.py): the same bytes as
`--num_workers` for a seed and shard plan.

Example:
    python -m data_prep.create_pretraining_data \
      --input_file=sample_text.txt --output_file=/tmp/tf_examples.tfrecord \
      --vocab_file=vocab.txt --do_lower_case=True --max_seq_length=128 \
      --max_predictions_per_seq=20 --masked_lm_prob=0.15 --random_seed=12345 \
      --dupe_factor=5
"""

import os
import random
import time

from absl import flags
from absl import logging

from bert_tf.io_utils import InputError
from bert_tf.runtime import app
from bert_tf.runtime import bert_flags
from bert_tf.runtime import flag_checks
from bert_tf.runtime import flag_needs
from bert_tf.tokenizers.loading import load_tokenizer
from data_prep.beam import pipeline as beam_pipeline
from data_prep.common.outputs import remove
from data_prep.pretraining.documents import expand_input_files
from data_prep.pretraining.documents import plan_shards
from data_prep.pretraining.documents import read_documents
from data_prep.pretraining.documents import Shard
from data_prep.pretraining.instances import InstanceOptions
from data_prep.pretraining.records import make_records
from data_prep.pretraining.records import write_round_robin
from data_prep.pretraining.shards import write_shards

FLAGS = flags.FLAGS


def define_flags():
  """Defines this command's flags (the original names and defaults)."""
  flags.DEFINE_string(
    "input_file",
    None,
    "Input raw text file (or comma-separated list of files).",
  )
  flags.DEFINE_string(
    "output_file",
    None,
    "Output TF example file (or comma-separated list of files).",
  )
  flags.DEFINE_bool(
    "do_whole_word_mask",
    False,
    "Whether to use whole word masking rather than per-WordPiece masking.",
  )
  flags.DEFINE_integer("max_seq_length", 128, "Maximum sequence length.")
  flag_checks.at_least("max_seq_length", 3)
  bert_flags.define_tokenizer_flags()
  flags.DEFINE_integer(
    "max_predictions_per_seq",
    20,
    "Maximum number of masked LM predictions per sequence.",
  )
  flag_checks.positive("max_predictions_per_seq")
  flags.DEFINE_integer("random_seed", 12345, "Random seed for data generation.")
  flag_checks.in_range("random_seed", 0, 2**32 - 1)
  flags.DEFINE_integer(
    "dupe_factor",
    10,
    "Number of times to duplicate the input data (with different masks).",
  )
  flag_checks.positive("dupe_factor")
  flags.DEFINE_float("masked_lm_prob", 0.15, "Masked LM probability.")
  flag_checks.in_range("masked_lm_prob", 0, 1)
  flags.DEFINE_float(
    "short_seq_prob",
    0.1,
    "Probability of creating sequences which are shorter than the "
    "maximum length.",
  )
  flag_checks.in_range("short_seq_prob", 0, 1)
  flags.DEFINE_string(
    "spm_model_file",
    None,
    "Optional SentencePiece model; replaces --vocab_file. Its vocabulary "
    "must hold [CLS], [SEP] and [MASK]. (Whole-word masking relies on '##' "
    "pieces, so it does nothing with SentencePiece.)",
  )
  flag_needs.excludes(
    "do_whole_word_mask", "spm_model_file", why="it finds words by '##' pieces"
  )
  flags.DEFINE_integer(
    "num_workers",
    0,
    "0: the original single-stream algorithm (identical output). N >= 1: "
    "scalable mode, input shards in N processes, one output file per shard, "
    "deterministic for a seed and N but not the original's order.",
  )
  flag_checks.non_negative("num_workers")
  flag_needs.excludes("num_workers", "runner")  # Beam runs the workers
  flags.DEFINE_integer(
    "shard_size_mb",
    16,
    "Scalable mode: input files are cut at blank lines into shards of about "
    "this size (and into at least --num_workers shards); bounds the memory "
    "of each worker.",
  )
  flag_checks.positive("shard_size_mb")
  flag_needs.requires("shard_size_mb", "num_workers", "runner")
  beam_pipeline.define_runner_flags(
    "output files (exactly; default 1). Input files are cut at blank "
    "lines into at least this many shards of about --shard_size_mb, "
    "spread over the files in order (a file may be empty)."
  )


def _check_flags():
  """One-line InputErrors for flags the algorithm cannot work with."""
  for name in ("input_file", "output_file"):
    if not FLAGS[name].value:
      raise InputError("--%s is required" % name)
  if not FLAGS.vocab_file and not FLAGS.spm_model_file:
    raise InputError("--vocab_file is required")
  # Beyond the ranges every entry point checks (bert_tf/runtime/flag_checks.py).
  checks = [
    (
      "max_seq_length",
      FLAGS.max_seq_length >= 5,
      "must be >= 5 ([CLS] A [SEP] B [SEP])",
    ),
    ("masked_lm_prob", FLAGS.masked_lm_prob > 0.0, "must be in (0, 1]"),
  ]
  for name, ok, rule in checks:
    if not ok:
      raise InputError("--%s=%s %s" % (name, FLAGS[name].value, rule))
  if (FLAGS.num_workers or FLAGS.runner) and "," in FLAGS.output_file:
    raise InputError(
      "--output_file: the scalable mode (--num_workers > 0 "
      "or --runner) takes one path and writes one file per "
      "shard"
    )


def _options():
  return InstanceOptions(
    max_seq_length=FLAGS.max_seq_length,
    max_predictions_per_seq=FLAGS.max_predictions_per_seq,
    dupe_factor=FLAGS.dupe_factor,
    masked_lm_prob=FLAGS.masked_lm_prob,
    short_seq_prob=FLAGS.short_seq_prob,
    do_whole_word_mask=FLAGS.do_whole_word_mask,
    exact_stream=not (FLAGS.num_workers or FLAGS.runner),
  )


def _run_faithful(input_files, tokenizer_args):
  tokenizer = load_tokenizer(*tokenizer_args)
  documents = read_documents([Shard(f) for f in input_files], tokenizer)
  if not documents:
    raise InputError("--input_file=%s: no text" % FLAGS.input_file)
  rng = random.Random(FLAGS.random_seed)
  records, stats = make_records(
    documents, tokenizer, _options(), rng, progress=True
  )
  output_files = FLAGS.output_file.split(",")
  write_round_robin(records, output_files)
  return stats, output_files


def _run_beam(input_files, tokenizer_args, beam_args):
  # pylint: disable-next=g-import-not-at-top
  from data_prep.beam.pretraining import write_shards_beam

  load_tokenizer(*tokenizer_args)  # fail early, not in every worker
  shards = plan_shards(
    sorted(input_files),
    FLAGS.shard_size_mb << 20,
    min_shards=FLAGS.num_output_shards or 1,
  )
  stats, output_files = write_shards_beam(
    shards,
    FLAGS.output_file,
    FLAGS.num_output_shards,
    tokenizer_args,
    _options(),
    FLAGS.random_seed,
    FLAGS.runner,
    beam_args,
  )
  if not stats.documents:
    remove(output_files)  # empty files would pass for a result
    raise InputError("--input_file=%s: no text" % FLAGS.input_file)
  return stats, output_files


def _run_scalable(input_files, tokenizer_args):
  load_tokenizer(*tokenizer_args)  # fail early, not in every worker
  shards = plan_shards(
    sorted(input_files), FLAGS.shard_size_mb << 20, min_shards=FLAGS.num_workers
  )
  stats, output_files = write_shards(
    shards,
    FLAGS.output_file,
    tokenizer_args,
    _options(),
    FLAGS.random_seed,
    FLAGS.num_workers,
  )
  if not stats.documents:
    for path in output_files:  # empty files would pass for a result
      if os.path.exists(path):
        os.remove(path)
    raise InputError("--input_file=%s: no text" % FLAGS.input_file)
  return stats, output_files


def main(argv):
  beam_args = beam_pipeline.check_beam_args(argv)
  _check_flags()
  start = time.time()
  input_files = expand_input_files(FLAGS.input_file)
  # `load_tokenizer`'s arguments; masking needs [MASK] in the vocabulary.
  tokenizer_args = (
    FLAGS.vocab_file,
    FLAGS.do_lower_case,
    FLAGS.spm_model_file,
    ("[CLS]", "[SEP]", "[MASK]"),
  )
  if FLAGS.runner:
    stats, output_files = _run_beam(input_files, tokenizer_args, beam_args)
  elif FLAGS.num_workers:
    stats, output_files = _run_scalable(input_files, tokenizer_args)
  else:
    stats, output_files = _run_faithful(input_files, tokenizer_args)
  seconds = time.time() - start
  logging.info("Wrote %d files: %s", len(output_files), ", ".join(output_files))
  logging.info(
    "%d documents, %d instances, %d masked tokens in %.1f s (%.0f instances/s)",
    stats.documents,
    stats.instances,
    stats.masked_tokens,
    seconds,
    stats.instances / max(seconds, 1e-9),
  )


def run():
  """Console-script entry point."""
  define_flags()
  app.run_app(main, beam_pipeline.parse_flags)


if __name__ == "__main__":
  run()
