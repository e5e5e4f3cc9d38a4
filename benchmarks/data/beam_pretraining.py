r"""Benchmark: pre-training data through the three drivers, in one run.

The corpus (../shared/data/corpus/tiny_pretrain_corpus.txt) is replicated to
about --target_mb and converted by
  (a) the faithful single-process path (`--num_workers=0`),
  (b) the Beam DirectRunner with 2 worker processes
      (`--runner=DirectRunner --direct_num_workers=2
      --direct_running_mode=multi_processing`),
  (c) the process pool (`--num_workers=2`),
and (b) once more on twice the corpus, to show that its memory is bounded
by the shard size, not the corpus. Each run is a fresh process tree; peak
memory is the largest resident set of any of its processes. Prints
instances/s and peak MB per variant.

    python -m benchmarks.data.beam_pretraining --target_mb=30 --repeats=2
"""

import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

from absl import app
from absl import flags

_REPO = os.path.dirname(
  os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
)
_SHARED = os.path.join(_REPO, "..", "shared")

FLAGS = flags.FLAGS
flags.DEFINE_string(
  "corpus",
  os.path.join(_SHARED, "data", "corpus", "tiny_pretrain_corpus.txt"),
  "Corpus to replicate.",
)
flags.DEFINE_string(
  "vocab_file",
  os.path.join(_REPO, "tests", "fixtures", "vocab_uncased.txt"),
  "WordPiece vocab.",
)
flags.DEFINE_integer("target_mb", 30, "Size of the replicated corpus.")
flags.DEFINE_integer("repeats", 1, "Runs per variant (medians printed).")

# Runs the command given as arguments and prints the peak RSS (KB) of its
# process tree: ru_maxrss of waited-for descendants.
_MEASURE = (
  "import resource, subprocess, sys; "
  "code = subprocess.call(sys.argv[1:]); "
  "print('PEAK_KB', resource.getrusage("
  "resource.RUSAGE_CHILDREN).ru_maxrss); sys.exit(code)"
)
_INSTANCES = re.compile(r"(\d+) documents, (\d+) instances")


def _corpus(folder, megabytes):
  with open(FLAGS.corpus, encoding="utf-8") as f:
    text = f.read().strip() + "\n\n"
  copies = max(1, round(megabytes * (1 << 20) / len(text.encode("utf-8"))))
  path = os.path.join(folder, "corpus_%dmb.txt" % megabytes)
  with open(path, "w", encoding="utf-8") as f:
    f.write(text * copies)
  return path


def _run(corpus, output, extra):
  command = [
    sys.executable,
    "-m",
    "data_prep.create_pretraining_data",
    "--input_file=" + corpus,
    "--output_file=" + output,
    "--vocab_file=" + FLAGS.vocab_file,
    "--max_seq_length=128",
    "--max_predictions_per_seq=20",
    "--dupe_factor=1",
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
  instances = int(_INSTANCES.search(result.stderr).group(2))
  peak = int(result.stdout.split("PEAK_KB")[-1]) / 1024
  return instances / seconds, peak, instances


def main(argv):
  del argv
  beam = [
    "--runner=DirectRunner",
    "--direct_num_workers=2",
    "--direct_running_mode=multi_processing",
    "--num_output_shards=8",
  ]
  with tempfile.TemporaryDirectory() as folder:
    small = _corpus(folder, FLAGS.target_mb)
    large = _corpus(folder, 2 * FLAGS.target_mb)
    variants = [
      ("(a) single process", small, []),
      ("(b) Beam DirectRunner, 2 workers", small, beam),
      ("(c) process pool, 2 workers", small, ["--num_workers=2"]),
      ("(b) Beam, 2x corpus", large, beam),
    ]
    results = {name: [] for name, _, _ in variants}
    for _ in range(FLAGS.repeats):  # interleaved: same machine load
      for name, corpus, extra in variants:
        output = os.path.join(folder, "out", "pt.tfrecord")
        results[name].append(_run(corpus, output, extra))
    base = statistics.median(r[0] for r in results[variants[0][0]])
    print(
      "corpus %d MB (x2 for the last row), %d run(s) each, medians"
      % (FLAGS.target_mb, FLAGS.repeats)
    )
    for name, _, _ in variants:
      rate = statistics.median(r[0] for r in results[name])
      peak = statistics.median(r[1] for r in results[name])
      print(
        "%-34s %8.0f instances/s (%.2fx)  peak %5.0f MB  %d instances"
        % (name, rate, rate / base, peak, results[name][0][2])
      )


if __name__ == "__main__":
  app.run(main)
