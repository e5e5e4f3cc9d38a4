r"""Benchmark: data_prep.learn_vocab's time and memory, and its vocabulary's
coverage of SQuAD dev contexts next to Google's uncased vocabulary.

On the shared 3 MB corpus, in one run (same machine load):
  (a) WordPiece, single process,
  (b) WordPiece, Beam DirectRunner with 2 worker processes
      (`--direct_num_workers=2 --direct_running_mode=multi_processing`,
      `--num_output_shards=4` count shards),
  (c) SentencePiece (unigram, one process),
each a fresh process tree (peak memory: the largest resident set of any of
its processes; wall and CPU seconds include Python and library start-up).
(a) and (b) must write the same file. Then, on the contexts of SQuAD
dev-v1.1, split into words by the original BasicTokenizer: the share of
words that become [UNK] and the WordPiece pieces per word, for (a) and for
Google's vocabulary (and SentencePiece pieces per whitespace word for (c)).

    python -m benchmarks.data.learn_vocab --vocab_size=8000 --output_dir=/tmp/lv
"""

import json
import os
import subprocess
import sys
import time

from absl import app
from absl import flags

from bert_tf.tokenizers.sentencepiece_tokenizer import preprocess_text
from bert_tf.tokenizers.sentencepiece_tokenizer import SentencePieceTokenizer
from bert_tf.tokenizers.tokenization import FullTokenizer

_REPO = os.path.dirname(
  os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
)
_SHARED = os.path.join(_REPO, "..", "shared", "data")

FLAGS = flags.FLAGS
flags.DEFINE_string(
  "corpus",
  os.path.join(_SHARED, "corpus", "tiny_pretrain_corpus.txt"),
  "Corpus to learn from.",
)
flags.DEFINE_string(
  "squad_file",
  os.path.join(_SHARED, "squad", "dev-v1.1.json"),
  "SQuAD file whose contexts are measured.",
)
flags.DEFINE_string(
  "google_vocab",
  os.path.join(_REPO, "tests", "fixtures", "vocab_uncased.txt"),
  "Google's vocab.txt.",
)
flags.DEFINE_integer("vocab_size", 8000, "Vocabulary size to learn.")
flags.DEFINE_integer("num_unused_tokens", 99, "[unusedN] tokens.")
flags.DEFINE_string(
  "output_dir",
  "/tmp/learn_vocab_benchmark",
  "Where the vocabularies are written.",
)

# Runs the command given as arguments and prints the peak RSS (KB) of its
# process tree (ru_maxrss of waited-for descendants) and their CPU time
# (the machine is shared: CPU seconds are steadier than wall time).
_MEASURE = (
  "import resource, subprocess, sys; "
  "code = subprocess.call(sys.argv[1:]); "
  "usage = resource.getrusage(resource.RUSAGE_CHILDREN); "
  "print('CPU_S', usage.ru_utime + usage.ru_stime); "
  "print('PEAK_KB', usage.ru_maxrss); sys.exit(code)"
)


def _learn(output, extra):
  command = [
    sys.executable,
    "-m",
    "data_prep.learn_vocab",
    "--input_file=" + FLAGS.corpus,
    "--output_file=" + output,
    "--vocab_size=%d" % FLAGS.vocab_size,
    "--num_unused_tokens=%d" % FLAGS.num_unused_tokens,
  ] + extra
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
  start = time.perf_counter()
  result = subprocess.run(
    [sys.executable, "-c", _MEASURE] + command,
    cwd=_REPO,
    env=env,
    capture_output=True,
    text=True,
    check=False,
  )
  seconds = time.perf_counter() - start
  if result.returncode:
    sys.exit("failed: %s\n%s" % (" ".join(extra), result.stderr[-2000:]))
  cpu = float(result.stdout.split("CPU_S")[-1].split()[0])
  return seconds, cpu, int(result.stdout.split("PEAK_KB")[-1]) / 1024


def _contexts():
  with open(FLAGS.squad_file, encoding="utf-8") as f:
    data = json.load(f)["data"]
  return [p["context"] for article in data for p in article["paragraphs"]]


def _wordpiece_coverage(vocab_file, contexts):
  tokenizer = FullTokenizer(vocab_file, do_lower_case=True)
  words = pieces = unknown = 0
  for context in contexts:
    for word in tokenizer.basic_tokenizer.tokenize(context):
      word_pieces = tokenizer.wordpiece_tokenizer.tokenize(word)
      words += 1
      pieces += len(word_pieces)
      unknown += word_pieces == ["[UNK]"]
  return words, unknown / words, pieces / words


def _sentencepiece_coverage(model_file, contexts):
  tokenizer = SentencePieceTokenizer(model_file, do_lower_case=True)
  words = pieces = unknown = 0
  for context in contexts:
    context_pieces = tokenizer.tokenize(context)
    words += len(preprocess_text(context, True).split())
    pieces += len(context_pieces)
    unknown += sum(tokenizer.vocab.get(p, 1) == 1 for p in context_pieces)
  return words, unknown / pieces, pieces / words


def main(argv):
  del argv
  os.makedirs(FLAGS.output_dir, exist_ok=True)
  single = os.path.join(FLAGS.output_dir, "vocab_single.txt")
  beam = os.path.join(FLAGS.output_dir, "vocab_beam.txt")
  spm_model = os.path.join(FLAGS.output_dir, "spm.model")
  runs = [
    ("(a) WordPiece, single process", single, []),
    (
      "(b) WordPiece, Beam DirectRunner, 2 workers",
      beam,
      [
        "--runner=DirectRunner",
        "--direct_num_workers=2",
        "--direct_running_mode=multi_processing",
        "--num_output_shards=4",
      ],
    ),
    ("(c) SentencePiece unigram", spm_model, ["--model_type=sentencepiece"]),
  ]
  print(
    "corpus %s (%.1f MB), vocab_size %d"
    % (FLAGS.corpus, os.path.getsize(FLAGS.corpus) / 2**20, FLAGS.vocab_size)
  )
  for name, output, extra in runs:
    seconds, cpu, peak = _learn(output, extra)
    print(
      "%-45s %6.1f s wall  %6.1f s CPU  peak %5.0f MB"
      % (name, seconds, cpu, peak)
    )
  with open(single, "rb") as a, open(beam, "rb") as b:
    print("(a) == (b):", a.read() == b.read())
  contexts = _contexts()
  print("SQuAD dev contexts: %d" % len(contexts))
  for name, measure, path in [
    ("learned WordPiece (a)", _wordpiece_coverage, single),
    ("Google uncased vocab", _wordpiece_coverage, FLAGS.google_vocab),
    ("learned SentencePiece (c)", _sentencepiece_coverage, spm_model),
  ]:
    with open(path, "rb") as f:
      size = sum(1 for _ in f) if path.endswith(".txt") else FLAGS.vocab_size
    words, unknown, per_word = measure(path, contexts)
    print(
      "%-28s size %6d  words %7d  unknown %.4f%%  pieces/word %.3f"
      % (name, size, words, 100 * unknown, per_word)
    )


if __name__ == "__main__":
  app.run(main)
