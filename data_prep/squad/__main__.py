"""SQuAD JSON -> doc-span TFRecord (+ sidecar for predictions).

The data side of the original run_squad.py as its own step: same features
(field for field), same TFRecord feature names, and the training-time shuffle
with random.Random(12345) (on by default for training files).

Usage:
  python -m data_prep.squad --input_file=dev-v1.1.json \\
    --output_file=eval.tf_record --vocab_file=vocab.txt --do_lower_case=true \\
    --max_seq_length=384 --doc_stride=128 --max_query_length=64 \\
    --is_training=false --version_2_with_negative=false

`--num_workers` defaults to the cores this process may use (at most 8).
"""

import gc
import os
import random
import time

from absl import flags

from bert_tf.io_utils import InputError
from bert_tf.io_utils import require_file
from bert_tf.runtime import app
from bert_tf.runtime import bert_flags
from bert_tf.runtime import flag_checks
from bert_tf.tokenizers.loading import load_tokenizer
from data_prep.beam import pipeline as beam_pipeline
from data_prep.squad import flags as squad_flags
from data_prep.squad.example import load_squad_examples
from data_prep.squad.writer import encoder_settings
from data_prep.squad.writer import write_squad_features

FLAGS = flags.FLAGS

# More pool workers cost more to start (and ~100 MB each) than a SQuAD-sized
# file gains.
_MAX_DEFAULT_WORKERS = 8


def default_num_workers():
  """The cores this process may run on (CPU affinity, e.g. a container's
  cpuset), at most `_MAX_DEFAULT_WORKERS`."""
  try:
    cores = len(os.sched_getaffinity(0))
  except AttributeError:  # no affinity API (macOS, Windows)
    cores = os.cpu_count() or 1
  return max(1, min(cores, _MAX_DEFAULT_WORKERS))


def define_flags():
  """Defines this command's flags (the original names and defaults)."""
  flags.DEFINE_string(
    "input_file", None, "SQuAD json, e.g. train-v1.1.json or dev-v1.1.json."
  )
  flags.DEFINE_string("output_file", None, "Output TFRecord file.")
  flags.DEFINE_bool(
    "is_training",
    False,
    "Training file: read answers, write start/end positions.",
  )
  flags.DEFINE_bool(
    "shuffle_train_examples",
    True,
    "With --is_training, shuffle the examples with random.Random(12345) "
    "before featurization, as the original run_squad.py does.",
  )
  flags.DEFINE_string(
    "features_file",
    None,
    "JSON-lines sidecar (tokens, token_to_orig_map, token_is_max_context) "
    "for predictions. Default: <output_file>.features.jsonl when "
    "--is_training=false; not written for training unless set.",
  )
  flags.DEFINE_integer(
    "num_workers",
    default_num_workers(),
    "Processes converting examples; the output is identical for any "
    "value. Default: the cores available to this process, at most %d "
    "(1: no worker processes)." % _MAX_DEFAULT_WORKERS,
  )
  flag_checks.non_negative("num_workers")
  bert_flags.define_tokenizer_flags()
  bert_flags.define_spm_model_file()
  bert_flags.define_max_seq_length(384)
  squad_flags.define_feature_flags()
  beam_pipeline.define_runner_flags(
    "output shards <output_file>-SSSSS-of-NNNNN (and of the sidecar); "
    "default 1, at most one per ~256 examples."
  )


def main(argv):
  beam_args = beam_pipeline.check_beam_args(argv)
  require_file(FLAGS.input_file, "input_file")
  # A bad vocabulary fails before the examples are read.
  tokenizer = load_tokenizer(
    FLAGS.vocab_file, FLAGS.do_lower_case, FLAGS.spm_model_file
  )
  if not FLAGS.output_file:
    raise InputError("--output_file is required")
  if FLAGS.num_workers < 1:
    raise InputError("--num_workers must be at least 1")
  features_file = FLAGS.features_file
  if features_file is None and not FLAGS.is_training:
    features_file = FLAGS.output_file + ".features.jsonl"
  start = time.time()
  # One conversion, then the process exits: the cycle collector would only
  # re-traverse every live container (the JSON, the examples, the caches),
  # while reading, when re-enabled after writing and at exit.
  gc.disable()
  examples, skipped = load_squad_examples(
    FLAGS.input_file, FLAGS.is_training, FLAGS.version_2_with_negative
  )
  if FLAGS.is_training and FLAGS.shuffle_train_examples:
    random.Random(12345).shuffle(examples)
  if FLAGS.runner:
    gc.enable()  # a pipeline's workers run long and make cycles
    # pylint: disable-next=g-import-not-at-top
    from data_prep.beam.squad import write_squad_features_beam

    counts, outputs = write_squad_features_beam(
      examples,
      encoder_settings(
        FLAGS.vocab_file,
        FLAGS.do_lower_case,
        FLAGS.max_seq_length,
        FLAGS.doc_stride,
        FLAGS.max_query_length,
        FLAGS.is_training,
        bool(features_file),
        FLAGS.spm_model_file,
      ),
      FLAGS.output_file,
      features_file,
      FLAGS.num_output_shards,
      FLAGS.runner,
      beam_args,
    )
  else:
    outputs = [f for f in (FLAGS.output_file, features_file) if f]
    counts = write_squad_features(
      examples,
      FLAGS.vocab_file,
      FLAGS.do_lower_case,
      FLAGS.output_file,
      features_file,
      FLAGS.max_seq_length,
      FLAGS.doc_stride,
      FLAGS.max_query_length,
      FLAGS.is_training,
      num_workers=FLAGS.num_workers,
      progress=True,
      spm_model_file=FLAGS.spm_model_file,
      tokenizer=tokenizer,
    )
  seconds = max(time.time() - start, 1e-9)
  print(
    "examples: %d, features: %d, skipped answers: %d, throughput: %.0f "
    "examples/s (%.0f features/s), wrote %s"
    % (
      counts.examples,
      counts.features,
      len(skipped),
      counts.examples / seconds,
      counts.features / seconds,
      ", ".join(outputs),
    )
  )
  gc.freeze()  # the exit's collection skips them


def run():
  """Console-script entry point."""
  define_flags()
  app.run_app(main, beam_pipeline.parse_flags)


if __name__ == "__main__":
  run()
