"""Reading a tf.profiler trace of the step: where the time went.

Two views of the host's op events (`step_timing.profile` prints both):

- `op_self_times`: each op type's self time summed over threads. Shares of
  thread time: ops that run beside each other (a cast next to a matmul on
  the other core) count in full, so only the shares mean anything.
- `wall_breakdown`: the traced span split by what was running, which is
  what the step's time is made of: time with a matmul running (the flops
  the benchmarks count), time with only other ops running (each op type
  gets its share of it), and time with no op at all (dispatch, the Python
  loop). The five longest stretches without a matmul are listed too; when
  training, one per step is the optimizer's update, which waits for every
  gradient (global-norm clipping).

    python -m benchmarks.speed.trace_report /tmp/prof/mixed_bfloat16_128x8
"""

import collections
import os
import re
import sys

# Kernels of XLA-compiled functions are named by HLO (`multiply_add_fusion.1`).
_XLA_KERNEL = re.compile(r"^[a-z][a-z0-9_\-]*(\.\d+)?$")
_XLA_WORDS = ("fusion", "reduce", "wrapped", "copy", "convert", "broadcast")
XLA = "XLA kernels"
# oneDNN's plain and fused MatMul, BatchMatMul and Einsum.
_MATMUL = re.compile(r"MatMul|Einsum")


def _xplanes(logdir):
  from tensorflow.tsl.profiler.protobuf import xplane_pb2  # pylint: disable=g-import-not-at-top

  for root, _, files in os.walk(logdir):
    for name in files:
      if name.endswith(".xplane.pb"):
        space = xplane_pb2.XSpace()
        with open(os.path.join(root, name), "rb") as f:
          space.ParseFromString(f.read())
        yield from space.planes


def _kind(name):
  """Op type of a host event name, XLA for XLA kernels, None otherwise."""
  if _XLA_KERNEL.match(name) and any(w in name for w in _XLA_WORDS):
    return XLA
  if ":" not in name or "::" in name:  # executor, not op, events
    return None
  op = name.rsplit(":", 1)[1].strip()
  return None if op.startswith("__") else op  # "__": a whole tf.function


def host_lines(logdir):
  """Per host thread: [(start_ps, duration_ps, kind)] sorted by start, kind
  None for events that are not ops (kept: ops nest inside them)."""
  for plane in _xplanes(logdir):
    if not plane.name.startswith("/host:CPU"):
      continue
    meta = {k: v.name for k, v in plane.event_metadata.items()}
    for line in plane.lines:
      base = line.timestamp_ns * 1000
      yield sorted(
        (
          (
            base + e.offset_ps,
            e.duration_ps,
            _kind(meta.get(e.metadata_id, "")),
          )
          for e in line.events
        ),
        key=lambda e: (e[0], -e[1]),
      )


def op_self_times(logdir):
  """{op type: self seconds}: an op event's duration minus that of the op
  events nested in it on the same thread; XLA kernels as one entry."""
  totals = collections.Counter()
  for events in host_lines(logdir):
    stack = []  # [end_ps, op type, child time, own time]
    for start, duration, kind in events:
      if kind is None:
        continue
      if kind == XLA:  # leaves: nothing nests in a kernel
        totals[XLA] += duration / 1e12
        continue
      while stack and stack[-1][0] <= start:
        _, op, child, own = stack.pop()
        totals[op] += (own - child) / 1e12
      if stack:
        stack[-1][2] += duration
      stack.append([start + duration, kind, 0, duration])
    for _, op, child, own in stack:
      totals[op] += (own - child) / 1e12
  return totals


def wall_breakdown(logdir, min_stretch_ms=5.0):
  """(span s, {"matmul"/"other ops"/"no op": s}, {op type: s of the
  other-ops time}, [(start s, length s, {op type: s})] matmul-free
  stretches longer than `min_stretch_ms`)."""
  edges = []
  for events in host_lines(logdir):
    edges += [
      edge
      for start, duration, kind in events
      if kind
      for edge in ((start, 1, kind), (start + duration, -1, kind))
    ]
  if not edges:
    return 0.0, {}, {}, []
  edges.sort(key=lambda e: (e[0], e[1]))
  first, running, matmuls = edges[0][0], collections.Counter(), 0
  wall, others = collections.Counter(), collections.Counter()
  # The span opens without a matmul (the step's first ops are not one).
  stretches, free_since, previous = (
    [[first, 0.0, collections.Counter()]],
    first,
    first,
  )
  for time, step, kind in edges:
    if time > previous:
      part = (time - previous) / 1e12
      ops = [] if matmuls else [op for op, n in running.items() if n]
      if matmuls:
        wall["matmul"] += part
      elif ops:
        wall["other ops"] += part
        shares = {op: part / len(ops) for op in ops}
        others.update(shares)
        stretches[-1][2].update(shares)
      else:
        wall["no op"] += part
    running[kind] += step
    if _MATMUL.search(kind):
      matmuls += step
      if not matmuls:  # the last matmul ended
        free_since = time
        stretches.append([time, 0.0, collections.Counter()])
      elif matmuls == 1 and step == 1:  # the first one began
        stretches[-1][1], free_since = (time - free_since) / 1e12, None
    previous = time
  if free_since is not None:
    stretches[-1][1] = (previous - free_since) / 1e12
  long_ones = [
    ((s - first) / 1e12, length, ops)
    for s, length, ops in stretches
    if length * 1e3 > min_stretch_ms
  ]
  return (previous - first) / 1e12, wall, others, long_ones


def print_report(logdir, top=15):
  """Both tables, as Markdown."""
  totals = op_self_times(logdir)
  whole = sum(totals.values()) or 1.0
  print("| op type | self time (s, all threads) | share |")
  print("|---|---|---|")
  for op, seconds in totals.most_common(top):
    print("| %s | %.3f | %.1f%% |" % (op, seconds, 100 * seconds / whole))
  span, wall, others, stretches = wall_breakdown(logdir)
  if not span:
    return
  print("\nWall time of the traced span, %.3f s:\n" % span)
  print("| running | s | share |")
  print("|---|---|---|")
  for what in ("matmul", "other ops", "no op"):
    print(
      "| %s | %.3f | %.1f%% |" % (what, wall[what], 100 * wall[what] / span)
    )
  for op, seconds in others.most_common(8):
    print(
      "| - of which %s | %.3f | %.1f%% |" % (op, seconds, 100 * seconds / span)
    )
  for start, length, ops in sorted(stretches, key=lambda s: -s[1])[:5]:
    print(
      "\nNo matmul for %.1f ms from %.3f s: %s"
      % (
        1e3 * length,
        start,
        ", ".join("%s %.1f ms" % (op, 1e3 * s) for op, s in ops.most_common(3)),
      )
    )


if __name__ == "__main__":
  if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
    sys.exit("usage: python -m benchmarks.speed.trace_report TRACE_DIR")
  print_report(sys.argv[1])
