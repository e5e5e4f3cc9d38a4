"""What `train_step.py` and `inference.py` share: configs, shapes, FLOP
counts, the same-dtype matmul rate, interleaved rounds and the table.

A "shape" is `SEQxBATCH` (e.g. `128x8`). Each round times, for every
(dtype, shape) in turn, a plain matmul in that dtype and then the model, so
that load from other processes on a shared machine hits both alike; the
table reports medians over rounds and the share of the *same round's*
matmul rate (float32 matmul for float32, bfloat16 matmul for
mixed_bfloat16).

FLOPs per example (matmuls only; embedding lookups, softmax, LayerNorm and
the optimizer are not counted, so they show up as the missing share):
forward per layer = 2*S*(4H^2 + 2HI) + 4*S^2*H (QK^T and PV), plus the
2-output span head; a training step = 3 x forward (backward ~ 2 x forward).
"""

import os
import statistics
import time

from absl import flags
import tensorflow as tf

from benchmarks.speed import trace_report
from bert_tf.modeling.bert_config import BertConfig

CONFIGS = {
  "tiny": dict(
    hidden_size=128,
    num_hidden_layers=2,
    num_attention_heads=2,
    intermediate_size=512,
  ),
  "base": dict(
    hidden_size=768,
    num_hidden_layers=12,
    num_attention_heads=12,
    intermediate_size=3072,
  ),
}
DTYPES = ("float32", "mixed_bfloat16")
_MATMUL_DTYPE = {"float32": tf.float32, "mixed_bfloat16": tf.bfloat16}


def define_flags(default_rounds):
  """The flags both benchmarks take."""
  flags.DEFINE_enum("config", "base", sorted(CONFIGS), "Model size.")
  flags.DEFINE_list(
    "dtype",
    list(DTYPES),
    "Precisions to time, interleaved (%s)." % "|".join(DTYPES),
  )
  flags.DEFINE_list(
    "shapes", ["128x8", "128x32", "384x8"], "SEQxBATCH shapes to time."
  )
  flags.DEFINE_integer(
    "rounds", default_rounds, "Interleaved rounds; the table shows medians."
  )
  flags.DEFINE_bool("use_xla", False, "Compile the model with XLA.")
  flags.DEFINE_integer(
    "matmul_size", 2048, "n of the n x n x n reference matmul."
  )


def parse_shapes(texts):
  """["128x8", ...] -> [(128, 8), ...]."""
  shapes = []
  for text in texts:
    seq, _, batch = text.partition("x")
    shapes.append((int(seq), int(batch)))
  return shapes


def check_dtypes(names):
  for name in names:
    if name not in DTYPES:
      raise ValueError("--dtype: %r is not one of %s" % (name, DTYPES))


def bert_config(name):
  return BertConfig.from_dict(dict(vocab_size=30522, **CONFIGS[name]))


def forward_flops(config, seq):
  """Matmul FLOPs of one example's forward pass (encoder + span head)."""
  h, i = config.hidden_size, config.intermediate_size
  per_layer = 2 * seq * (4 * h * h + 2 * h * i) + 4 * seq * seq * h
  return config.num_hidden_layers * per_layer + 2 * seq * h * 2


class MatmulRate:
  """FLOP/s of an n x n x n matmul in one dtype (traced once)."""

  def __init__(self, dtype_name, n, repeats=8):
    dtype = _MATMUL_DTYPE[dtype_name]
    self.a = tf.cast(tf.random.normal([n, n]), dtype)
    self.b = tf.cast(tf.random.normal([n, n]), dtype)
    self.flops = 2 * n**3 * repeats
    self.repeats = repeats
    self.run = tf.function(
      lambda x, y: tf.reduce_sum(tf.cast(tf.matmul(x, y), tf.float32))
    )
    self.run(self.a, self.b).numpy()

  def measure(self):
    start = time.perf_counter()
    for _ in range(self.repeats):
      self.run(self.a, self.b).numpy()
    return self.flops / (time.perf_counter() - start)


def span_features(batch, seq, vocab, seed=1):
  """A batch of SQuAD training features (random ids, full mask)."""
  return {
    "input_ids": tf.random.uniform([batch, seq], 0, vocab, tf.int32, seed=seed),
    "input_mask": tf.ones([batch, seq], tf.int32),
    "segment_ids": tf.zeros([batch, seq], tf.int32),
    "start_positions": tf.fill([batch], 5),
    "end_positions": tf.fill([batch], 9),
  }


def run_rounds(cases, rounds, matmul_size):
  """Times every case per round, each after its dtype's matmul.

  Args:
    cases: list of (dtype, shape, flops_per_example, time_fn); `time_fn()`
      returns examples/s of one measurement.
    rounds: how many interleaved rounds.
    matmul_size: n of the reference matmul.

  Returns:
    {(dtype, shape): dict of lists: examples_per_sec, matmul, share}, and
    the load averages (1 min) seen at the start of each round.
  """
  matmuls = {d: MatmulRate(d, matmul_size) for d in {c[0] for c in cases}}
  results = {
    (c[0], c[1]): {"examples_per_sec": [], "matmul": [], "share": []}
    for c in cases
  }
  loads = []
  for r in range(rounds):
    loads.append(os.getloadavg()[0])
    for dtype, shape, flops, time_fn in cases:
      matmul = matmuls[dtype].measure()
      rate = time_fn()
      row = results[(dtype, shape)]
      row["examples_per_sec"].append(rate)
      row["matmul"].append(matmul)
      row["share"].append(rate * flops / matmul)
      print(
        "round %d %s %s: %.2f examples/s, matmul %.1f GFLOP/s, "
        "share %.0f%%"
        % (
          r + 1,
          dtype,
          shape,
          rate,
          matmul / 1e9,
          100 * rate * flops / matmul,
        ),
        flush=True,
      )
  return results, loads


def print_table(cases, results, loads):
  """Markdown table of medians, with the bfloat16/float32 speed ratio."""
  fp32 = {
    c[1]: statistics.median(results[("float32", c[1])]["examples_per_sec"])
    for c in cases
    if ("float32", c[1]) in results
  }
  print(
    "| dtype | seq x batch | examples/s | model GFLOP/s | matmul GFLOP/s "
    "(same dtype) | share of matmul | vs float32 |"
  )
  print("|---|---|---|---|---|---|---|")
  for dtype, shape, flops, _ in cases:
    row = results[(dtype, shape)]
    rate = statistics.median(row["examples_per_sec"])
    ratio = "%.2fx" % (rate / fp32[shape]) if shape in fp32 else "-"
    print(
      "| %s | %s | %.2f | %.1f | %.1f | %.0f%% | %s |"
      % (
        dtype,
        shape,
        rate,
        rate * flops / 1e9,
        statistics.median(row["matmul"]) / 1e9,
        100 * statistics.median(row["share"]),
        ratio,
      )
    )
  print(
    "load average (1 min) at each round: %s on %d cores"
    % (", ".join("%.2f" % x for x in loads), os.cpu_count())
  )


def profile(cases, logdir, top=15):
  """Traces one measurement of each case into `logdir` and prints where
  its time went (`trace_report`)."""
  for dtype, shape, _, time_fn in cases:
    case_dir = os.path.join(logdir, "%s_%s" % (dtype, shape))
    tf.profiler.experimental.start(case_dir)
    time_fn()
    tf.profiler.experimental.stop()
    print("## %s %s" % (dtype, shape))
    trace_report.print_report(case_dir, top)
