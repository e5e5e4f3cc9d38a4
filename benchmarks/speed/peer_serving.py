"""`peer.py --measures=serving`: each side's exported classifier (or HF
tokenizer + model) on MRPC dev pairs, single requests and batch 32, sides
interleaved; the flags are `peer.py`'s."""

import os
import subprocess
import sys

from absl import flags

from benchmarks.speed import peer_table

REPO = os.path.dirname(
  os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
)
FLAGS = flags.FLAGS

# oneDNN reorders each weight once instead of on every call (serving never
# changes weights; a process that trains must not set it), and the calling
# thread joins the op's work instead of waiting for the pool's.
SERVING_ENV = {
  "TF_ONEDNN_ASSUME_FROZEN_WEIGHTS": "1",
  "TF_ONEDNN_THREADPOOL_USE_CALLER_THREAD": "1",
}


def serving_env(side):
  if side == "bert_tf" and FLAGS.serving_env and FLAGS.measures == ["serving"]:
    return SERVING_ENV
  return {}


def _export(name, tree, dtype):
  """The serving target of one side: SavedModel dir or HF folder."""
  if name.startswith("torch"):
    return FLAGS.model_dir
  work = os.path.join(FLAGS.work_dir, "serving")
  if tree == REPO:  # checkpoint, head.npz and this tree's export
    subprocess.run(
      [sys.executable, "-m", "benchmarks.speed.serving", "--prepare_only"]
      + ["--work_dir=" + work, "--model_dir=" + FLAGS.model_dir]
      + ["--max_seq_length=%d" % FLAGS.max_seq_length, "--dtype=" + dtype],
      cwd=REPO,
      check=True,
    )
    return peer_table.export_path(work, FLAGS.max_seq_length, dtype)
  export_dir = os.path.join(work, "%s_%s" % (name, dtype))
  if not os.path.exists(export_dir):
    subprocess.run(
      [sys.executable, "-m", "bert_tf.export_saved_model"]
      + ["--task=classifier", "--task_name=mrpc", "--dtype=" + dtype]
      + ["--checkpoint=" + os.path.join(work, "classifier", "bert_model.ckpt")]
      + ["--max_seq_length=%d" % FLAGS.max_seq_length]
      + ["--export_dir=" + export_dir],
      cwd=tree,
      env=dict(os.environ, PYTHONPATH=tree),
      check=True,
    )
  return export_dir


def run_serving(sides, workers, results):
  """Single requests and batch 32 on MRPC dev pairs, interleaved."""
  pairs = peer_table.mrpc_pairs(FLAGS.mrpc_dev)
  head = os.path.join(FLAGS.work_dir, "serving", "head.npz")
  keys = [(name, d) for d in FLAGS.dtype for name, *_ in sides]
  for name, _, tree, _ in sides:  # the current tree first: it writes head
    for dtype in FLAGS.dtype:
      workers[(name, dtype)].ask(
        op="serving",
        target=_export(name, tree, dtype),
        head=head,
        max_seq_length=FLAGS.max_seq_length,
      )
  reference = workers[(_torch_name(sides), FLAGS.dtype[0])].ask(
    op="probabilities", pairs=pairs[:32]
  )["probabilities"]
  agreement = {}
  for key in keys:
    probs = workers[key].ask(op="probabilities", pairs=pairs[:32])
    agreement["%s %s" % key] = max(
      abs(a - b)
      for row, ref in zip(probs["probabilities"], reference)
      for a, b in zip(row, ref)
    )
    workers[key].ask(op="single", pairs=pairs[:3])  # warm-up
  latency = {key: [] for key in keys}
  block = 20
  for i, start in enumerate(range(0, FLAGS.requests, block)):
    chunk = [pairs[j % len(pairs)] for j in range(start, start + block)]
    for key in peer_table.rotated(keys, i):
      latency[key] += workers[key].ask(op="single", pairs=chunk)["seconds"]
  throughput = {key: [] for key in keys}
  loads = []
  for r in range(FLAGS.serving_rounds):
    loads.append(os.getloadavg()[0])
    seconds = dict.fromkeys(keys, 0.0)
    for b, start in enumerate(range(0, len(pairs), 32)):
      for key in peer_table.rotated(keys, r + b):
        seconds[key] += workers[key].ask(
          op="batch", pairs=pairs[start : start + 32]
        )["seconds"][0]
    for key in keys:
      throughput[key].append(len(pairs) / seconds[key])
  _print_serving(sides, len(pairs), latency, throughput, loads, agreement)
  results["serving"] = {
    "latency_s": {"%s %s" % k: v for k, v in latency.items()},
    "batch32_pairs_per_s": {"%s %s" % k: v for k, v in throughput.items()},
    "max_probability_diff_vs_torch_%s" % FLAGS.dtype[0]: agreement,
    "loads": loads,
  }


def _torch_name(sides):
  return [side[0] for side in sides if side[1] == "torch"][0]


def _print_serving(sides, n_pairs, latency, throughput, loads, agreement):
  print(
    "\n### serving: all-MiniLM-L6-v2 + 2-label head, MRPC dev pairs, "
    "truncated to %d, padded to the request's longest; "
    "%d single requests, %d x %d pairs at batch 32\n%s"
    % (
      FLAGS.max_seq_length,
      FLAGS.requests,
      FLAGS.serving_rounds,
      n_pairs,
      peer_table.cpu_line(),
    )
  )
  print(
    "| side | dtype | p50 ms | p99 ms | batch-32 pairs/s median [min–max] "
    "| p50 ÷ %s's | batch-32 ÷ %s's [per round] | max |Δp| |"
    % ((_torch_name(sides),) * 2)
  )
  print("|---|---|---|---|---|---|---|---|")
  for dtype in FLAGS.dtype:
    torch_key = (_torch_name(sides), dtype)
    torch_p50 = peer_table.percentile(latency[torch_key], 50)
    for name, *_ in sides:
      key = (name, dtype)
      p50 = peer_table.percentile(latency[key], 50)
      print(
        "| %s | %s | %.1f | %.1f | %s | %.2f | %s | %.1e |"
        % (
          name,
          dtype,
          1000 * p50,
          1000 * peer_table.percentile(latency[key], 99),
          peer_table.spread(throughput[key], "%.1f"),
          p50 / torch_p50,
          peer_table.ratio(throughput[key], throughput[torch_key]),
          agreement["%s %s" % key],
        )
      )
  print(
    "load average (1 min) per batch round: %s; the machine was shared"
    % ", ".join("%.1f" % x for x in loads)
  )
  env = serving_env("bert_tf")
  print(
    "bert_tf processes' environment: %s"
    % (" ".join("%s=%s" % kv for kv in sorted(env.items())) or "default")
  )
