"""Benchmark: SQuAD featurization, ours vs a straightforward original port.

Every variant runs in a fresh subprocess (its own peak RSS), `--repeats`
times, interleaved so that both see the same machine load:
  baseline: benchmarks/data/squad_baseline.py -- the original's reading and
    featurization, uncached, one process, tf.io.TFRecordWriter; the features
    are kept in memory, as the original keeps them for write_predictions.
  ours, N workers: what `python -m data_prep.squad` runs --
    load_squad_examples + write_squad_features (TFRecord and sidecar).
  cli (a --num_workers entry): `python -m data_prep.squad` itself with its
    default flags (so its default --num_workers), whole process only.
Two timings per run:
  conversion: read JSON -> features -> files, timed inside the process after
    its imports (the baseline imports TensorFlow first, like the original;
    ours never imports it). This is the "examples/s" of the issue's target.
  process: the whole subprocess, including interpreter start-up and imports.
Both as wall time and as CPU time (process + its workers); examples per
CPU-second hardly depends on the machine's load, wall time does. Medians are
printed. Checked: our TFRecords hold the baseline's tf.train.Examples, in
order (the bytes differ only in the order of the feature map's entries, which
protobuf leaves open), and are byte-identical for every worker count.

Usage:
  python -m benchmarks.data.squad_features \\
    --input_file=../shared/data/squad/dev-v1.1.json \\
    --vocab_file=tests/fixtures/vocab_uncased.txt --num_workers=1,2,cli \
    --repeats=3
"""

import filecmp
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from absl import app  # pylint: disable=g-import-not-at-top
from absl import flags  # pylint: disable=g-import-not-at-top

FLAGS = flags.FLAGS
flags.DEFINE_string(
  "input_file",
  "../shared/data/squad/dev-v1.1.json",
  "SQuAD json to convert (prediction mode).",
)
flags.DEFINE_string(
  "vocab_file", "tests/fixtures/vocab_uncased.txt", "Vocab file (uncased)."
)
flags.DEFINE_list(
  "num_workers", ["1", "2"], "Worker counts to run our variant with."
)
flags.DEFINE_integer("repeats", 3, "Runs per variant (medians reported).")
flags.DEFINE_integer("max_seq_length", 384, "")
flags.DEFINE_integer("doc_stride", 128, "")
flags.DEFINE_integer("max_query_length", 64, "")
flags.DEFINE_string("variant", None, "Internal: run one variant, print JSON.")
flags.DEFINE_string("output_file", None, "Internal: TFRecord to write.")

BASELINE = "baseline"
CLI = "cli"


def _cpu_seconds(who):
  usage = resource.getrusage(who)
  return usage.ru_utime + usage.ru_stime


def _process_cpu():
  return _cpu_seconds(resource.RUSAGE_SELF) + _cpu_seconds(
    resource.RUSAGE_CHILDREN
  )


def _convert_baseline(settings):
  """Returns (examples, features); the caller imported TensorFlow."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top

  from benchmarks.data import squad_baseline  # pylint: disable=g-import-not-at-top
  from bert_tf import tokenization  # pylint: disable=g-import-not-at-top

  examples = squad_baseline.read_eval_examples(FLAGS.input_file)
  tokenizer = tokenization.FullTokenizer(
    FLAGS.vocab_file, True, use_cache=False
  )
  kept = []
  with tf.io.TFRecordWriter(FLAGS.output_file) as writer:
    for feature in squad_baseline.baseline_features(
      examples, tokenizer, *settings, is_training=False
    ):
      writer.write(squad_baseline.serialize(feature, False))
      kept.append(feature)
  return len(examples), len(kept)


def _convert_ours(settings, num_workers):
  from data_prep.squad.example import load_squad_examples  # pylint: disable=g-import-not-at-top
  from data_prep.squad.writer import write_squad_features  # pylint: disable=g-import-not-at-top

  examples, _ = load_squad_examples(FLAGS.input_file, False, False)
  counts = write_squad_features(
    examples,
    FLAGS.vocab_file,
    True,
    FLAGS.output_file,
    FLAGS.output_file + ".features.jsonl",
    *settings,
    is_training=False,
    num_workers=num_workers,
  )
  return counts.examples, counts.features


def _run_variant():
  """Runs one variant in this process and prints its numbers as JSON."""
  settings = (FLAGS.max_seq_length, FLAGS.doc_stride, FLAGS.max_query_length)
  if FLAGS.variant == BASELINE:
    import tensorflow  # noqa: F401  pylint: disable=g-import-not-at-top
  wall, cpu = time.perf_counter(), _process_cpu()
  if FLAGS.variant == BASELINE:
    examples, features = _convert_baseline(settings)
  else:
    examples, features = _convert_ours(settings, int(FLAGS.variant))
  print(
    json.dumps(
      {
        "examples": examples,
        "features": features,
        "wall": time.perf_counter() - wall,
        "cpu": _process_cpu() - cpu,
        "peak_rss_mb": max(
          resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
          resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
        )
        / 1024.0,
      }
    )
  )


def _spawn_cli(output_file):
  """`python -m data_prep.squad` with default flags (384/128/64, uncased,
  prediction mode, default --num_workers): whole-process numbers only."""
  args = [
    sys.executable,
    "-m",
    "data_prep.squad",
    "--input_file=" + FLAGS.input_file,
    "--vocab_file=" + FLAGS.vocab_file,
    "--output_file=" + output_file,
  ]
  cpu = _cpu_seconds(resource.RUSAGE_CHILDREN)
  wall = time.perf_counter()
  out = subprocess.run(args, check=True, capture_output=True, text=True)
  wall = time.perf_counter() - wall
  cpu = _cpu_seconds(resource.RUSAGE_CHILDREN) - cpu
  counts = out.stdout.split("examples: ", 1)[1].split(",")
  return {
    "examples": int(counts[0]),
    "features": int(counts[1].split(": ")[1]),
    "wall": wall,
    "cpu": cpu,
    "peak_rss_mb": float("nan"),
    "process_wall": wall,
    "process_cpu": cpu,
  }


def _spawn(variant, output_file):
  """Runs a variant in a subprocess; adds its whole-process wall/CPU."""
  if variant == CLI:
    return _spawn_cli(output_file)
  args = [
    sys.executable,
    "-m",
    "benchmarks.data.squad_features",
    "--variant=" + variant,
    "--output_file=" + output_file,
    "--input_file=" + FLAGS.input_file,
    "--vocab_file=" + FLAGS.vocab_file,
    "--max_seq_length=%d" % FLAGS.max_seq_length,
    "--doc_stride=%d" % FLAGS.doc_stride,
    "--max_query_length=%d" % FLAGS.max_query_length,
  ]
  cpu = _cpu_seconds(resource.RUSAGE_CHILDREN)
  wall = time.perf_counter()
  out = subprocess.run(args, check=True, capture_output=True, text=True)
  result = json.loads(out.stdout.strip().splitlines()[-1])
  result["process_wall"] = time.perf_counter() - wall
  result["process_cpu"] = _cpu_seconds(resource.RUSAGE_CHILDREN) - cpu
  return result


def _same_examples(path_a, path_b):
  """Whether two TFRecord files hold equal tf.train.Examples, in order."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top

  parse = tf.train.Example.FromString
  records = zip(
    tf.data.TFRecordDataset(path_a), tf.data.TFRecordDataset(path_b)
  )
  count = 0
  for a, b in records:
    if parse(a.numpy()) != parse(b.numpy()):
      return False
    count += 1
  return (
    count
    == sum(1 for _ in tf.data.TFRecordDataset(path_a))
    == sum(1 for _ in tf.data.TFRecordDataset(path_b))
  )


def _medians(runs):
  return {key: statistics.median(run[key] for run in runs) for key in runs[0]}


def _print_table(names, medians):
  print(
    "%-18s %8s | %-40s | %-29s | %s"
    % (
      "variant",
      "features",
      "conversion: wall s  CPU s  ex/s  ex/CPU-s",
      "whole process: wall s  CPU s",
      "ex/s incl. start-up, peak RSS",
    )
  )
  for name in names:
    m = medians[name]
    print(
      "%-18s %8d | %12.2f %6.2f %6.0f %9.0f | %21.2f %6.2f | %8.0f, %.0f MB"
      % (
        name,
        m["features"],
        m["wall"],
        m["cpu"],
        m["examples"] / m["wall"],
        m["examples"] / m["cpu"],
        m["process_wall"],
        m["process_cpu"],
        m["examples"] / m["process_wall"],
        m["peak_rss_mb"],
      )
    )


def main(_):
  if FLAGS.variant:
    _run_variant()
    return
  tmp = tempfile.mkdtemp(prefix="squad_bench_")
  variants = [BASELINE] + FLAGS.num_workers
  runs = {v: [] for v in variants}
  print(
    "load average at start: %.1f %.1f %.1f (%d CPUs)"
    % (os.getloadavg() + (os.cpu_count(),))
  )
  for _ in range(FLAGS.repeats):
    for variant in variants:
      path = os.path.join(tmp, "%s.tf_record" % variant)
      runs[variant].append(_spawn(variant, path))
  paths = [os.path.join(tmp, "%s.tf_record" % v) for v in variants]
  assert _same_examples(paths[0], paths[1]), "ours != baseline"
  for path in paths[2:]:
    assert filecmp.cmp(path, paths[1], shallow=False), "worker counts differ"
  shutil.rmtree(tmp)
  print("load average at end:   %.1f %.1f %.1f" % os.getloadavg())
  names = {
    v: "baseline (1 proc)"
    if v == BASELINE
    else "ours, %s worker%s" % (v, "" if v == "1" else "s")
    for v in variants
  }
  if CLI in names:
    from data_prep.squad.__main__ import default_num_workers  # pylint: disable=g-import-not-at-top

    names[CLI] = "data_prep.squad, default (%d)" % default_num_workers()
  medians = {names[v]: _medians(runs[v]) for v in variants}
  print(
    "medians of %d runs on %s, %d examples; same tf.train.Examples as "
    "the baseline (ours: byte-identical for every worker count)"
    % (
      FLAGS.repeats,
      os.path.basename(FLAGS.input_file),
      medians[names[BASELINE]]["examples"],
    )
  )
  _print_table([names[v] for v in variants], medians)
  base = medians[names[BASELINE]]
  for variant in FLAGS.num_workers:
    m = medians[names[variant]]
    print(
      "%s vs baseline: conversion %.1fx by wall time, %.1fx by CPU time; "
      "whole process (imports included) %.1fx by wall, %.1fx by CPU"
      % (
        names[variant],
        base["wall"] / m["wall"],
        base["cpu"] / m["cpu"],
        base["process_wall"] / m["process_wall"],
        base["process_cpu"] / m["process_cpu"],
      )
    )


if __name__ == "__main__":
  app.run(main)
