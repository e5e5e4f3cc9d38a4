"""Helpers of `peer.py` and its benchmarks: the CPU line, spreads, ratios,
MRPC dev pairs and where `serving.py` exports (no TensorFlow imported)."""

import os
import statistics

_ISA = ("amx_bf16", "amx_int8", "avx512_bf16", "avx512_vnni")


def cpu_line():
  """'CPU: name, N cores; amx_bf16 no, ...' from /proc/cpuinfo."""
  name, present = "unknown", set()
  try:
    with open("/proc/cpuinfo") as f:
      for line in f:
        key, _, value = line.partition(":")
        if key.strip() == "model name":
          name = value.strip()
        elif key.strip() == "flags":
          present = set(value.split())
  except OSError:
    pass
  isa = ", ".join("%s %s" % (f, "yes" if f in present else "no") for f in _ISA)
  return "CPU: %s, %d cores; %s" % (name, os.cpu_count(), isa)


def rotated(items, r):
  return items[r % len(items) :] + items[: r % len(items)]


def spread(values, fmt="%.2f"):
  return (fmt + " [" + fmt + "–" + fmt + "]") % (
    statistics.median(values),
    min(values),
    max(values),
  )


def ratio(mine, theirs):
  """Ratio of medians, and the range of the per-round ratios."""
  per_round = [a / b for a, b in zip(mine, theirs)]
  return "%.2f [%.2f–%.2f]" % (
    statistics.median(mine) / statistics.median(theirs),
    min(per_round),
    max(per_round),
  )


def percentile(values, q):
  ordered = sorted(values)
  return ordered[min(len(ordered) - 1, int(q / 100 * len(ordered)))]


def mrpc_pairs(path):
  """[text_a, text_b] of every row of a GLUE MRPC TSV."""
  with open(path, encoding="utf-8-sig") as f:
    rows = [line.rstrip("\n").split("\t") for line in f][1:]
  return [[r[3], r[4]] for r in rows]


def export_path(work_dir, max_seq_length, dtype):
  """The SavedModel `serving.py --prepare_only` writes."""
  suffix = "" if dtype == "float32" else "_" + dtype
  return os.path.join(work_dir, "serving_%d%s" % (max_seq_length, suffix))
