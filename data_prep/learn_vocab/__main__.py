r"""Learns a WordPiece vocabulary (or a SentencePiece model) from raw text.

The original BERT leaves vocabulary learning out; this is the missing step.
The text is split into words as the original BasicTokenizer splits it (so
the vocabulary fits `FullTokenizer`), tensorflow-text's WordPiece learner
picks the pieces, and the vocabulary starts with Google's reserved tokens at
Google's ids ([PAD]=0, [unused0..98]=1..99, [UNK]=100, [CLS]=101, [SEP]=102,
[MASK]=103, the other [unusedN] from 104). The same input gives the same
file, single process or `--runner` (Beam counts the words of input shards
in parallel and learns once, see data_prep/beam/learn_vocab.py).

    python -m data_prep.learn_vocab --input_file=corpus/*.txt \
      --vocab_size=8000 --do_lower_case=True --output_file=vocab.txt

`--model_type=sentencepiece` trains an ALBERT-style SentencePiece model
for `--spm_model_file` instead (`--output_file=spm.model`).
"""

import time

from absl import flags

from bert_tf.io_utils import atomic_output
from bert_tf.io_utils import InputError
from bert_tf.runtime import app
from bert_tf.runtime import flag_checks
from data_prep.beam import pipeline as beam_pipeline
from data_prep.learn_vocab import words
from data_prep.pretraining.documents import expand_input_files
from data_prep.pretraining.documents import plan_shards
from data_prep.pretraining.documents import Shard

FLAGS = flags.FLAGS


def define_flags():
  """Defines this command's flags."""
  flags.DEFINE_string(
    "input_file", None, "Input raw text files (comma-separated globs)."
  )
  flags.DEFINE_string(
    "output_file", None, "Output vocab.txt (or SentencePiece .model file)."
  )
  flags.DEFINE_integer(
    "vocab_size",
    30522,
    "Maximum vocabulary size, reserved tokens included "
    "(WordPiece: the learner aims within 5% below it; a "
    "corpus with fewer pieces seen >= 10 times gives "
    "fewer).",
  )
  flag_checks.positive("vocab_size")
  flags.DEFINE_bool(
    "do_lower_case",
    True,
    "Lower-case (and strip accents) before learning; use the "
    "same value with the vocabulary afterwards.",
  )
  flags.DEFINE_enum(
    "model_type",
    "wordpiece",
    ["wordpiece", "sentencepiece"],
    "wordpiece: vocab.txt for --vocab_file; sentencepiece: a "
    "model for --spm_model_file.",
  )
  flags.DEFINE_integer(
    "num_unused_tokens",
    994,
    "WordPiece: [unusedN] tokens reserved (Google's uncased vocab: 994; "
    "at least 99, which keeps [UNK]=100 .. [MASK]=103).",
  )
  flag_checks.at_least("num_unused_tokens", 99)
  flags.DEFINE_integer(
    "shard_size_mb",
    16,
    "With --runner: input files are cut at blank lines into word-count "
    "shards of about this size.",
  )
  flag_checks.positive("shard_size_mb")
  beam_pipeline.define_runner_flags(
    "word-count shards (at least this many; files are cut at blank "
    "lines). The vocabulary is one file either way."
  )


def _check_flags(beam_args):
  for name in ("input_file", "output_file"):
    if not FLAGS[name].value:
      raise InputError("--%s is required" % name)
  if FLAGS.model_type == "sentencepiece" and (FLAGS.runner or beam_args):
    raise InputError(
      "--model_type=sentencepiece trains in one process (no --runner)"
    )


def _source():
  return "--input_file=%s" % FLAGS.input_file


def _learn_wordpiece(files, beam_args):
  if FLAGS.runner:
    # pylint: disable-next=g-import-not-at-top
    from data_prep.beam.learn_vocab import learn_vocab_beam

    shards = plan_shards(
      files, FLAGS.shard_size_mb << 20, FLAGS.num_output_shards or 1
    )
    return learn_vocab_beam(
      shards,
      FLAGS.output_file,
      FLAGS.do_lower_case,
      FLAGS.vocab_size,
      FLAGS.num_unused_tokens,
      FLAGS.runner,
      beam_args,
    ), len(shards)
  counts = words.count_words([Shard(f) for f in files], FLAGS.do_lower_case)
  # Imported after counting: it loads TensorFlow (a bad input line fails
  # first).
  # pylint: disable-next=g-import-not-at-top
  from data_prep.learn_vocab.wordpiece import learn_wordpiece
  from data_prep.learn_vocab.wordpiece import write_vocab

  vocab = learn_wordpiece(
    counts, FLAGS.vocab_size, FLAGS.num_unused_tokens, _source()
  )
  with atomic_output(FLAGS.output_file) as f:
    write_vocab(vocab, f)
  return len(vocab), 1


def _train_sentencepiece(files):
  # pylint: disable-next=g-import-not-at-top
  from data_prep.learn_vocab.sentencepiece import train_sentencepiece

  lines = (line for f in files for line in words.shard_text_lines(Shard(f)))
  model = train_sentencepiece(
    lines, FLAGS.vocab_size, FLAGS.do_lower_case, _source()
  )
  with atomic_output(FLAGS.output_file, "wb") as f:
    f.write(model)


def main(argv):
  beam_args = beam_pipeline.check_beam_args(argv)
  _check_flags(beam_args)
  files = expand_input_files(FLAGS.input_file)
  start = time.time()
  if FLAGS.model_type == "sentencepiece":
    _train_sentencepiece(files)
    print(
      "sentencepiece model (vocab_size=%d) -> %s in %.1f s"
      % (FLAGS.vocab_size, FLAGS.output_file, time.time() - start)
    )
    return
  size, shards = _learn_wordpiece(files, beam_args)
  print(
    "vocab_size=%d (of at most %d) from %d file(s), %d shard(s) -> %s "
    "in %.1f s"
    % (
      size,
      FLAGS.vocab_size,
      len(files),
      shards,
      FLAGS.output_file,
      time.time() - start,
    )
  )


def run():
  """Console-script entry point."""
  define_flags()
  app.run_app(main, beam_pipeline.parse_flags)


if __name__ == "__main__":
  run()
