r"""Throughput and peak memory of create_pretraining_data, both modes, one run.

Runs `python -m data_prep.create_pretraining_data` on a corpus (default: the
~3 MB shared tiny corpus) in the faithful mode (`--num_workers=0`, output
identical to the original) and in the scalable mode (`--num_workers=2`), each
as a fresh process, and reports instances/s over the whole process run
(start-up included, as a user sees it), the peak total RSS of the process
tree (sampled every 20 ms), the CPU seconds of the process tree (meaningful
on a loaded machine too), and how many cores `--workers` busy processes
actually get at the start. `--original_script` also times another command
line with the same flags (e.g. a copy of the original script runnable under
`tensorflow.compat.v1`).

Example:
    .venv/bin/python benchmarks/data/pretraining_data.py \
      --corpus=../shared/data/corpus/tiny_pretrain_corpus.txt
"""

import argparse
import multiprocessing
import os
import re
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(
  os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
)
_SUMMARY = re.compile(r"(\d+) documents, (\d+) instances, (\d+) masked")


def _tree_rss_bytes(root_pid):
  """Total RSS of root_pid and its descendants, from /proc."""
  children, rss = {}, {}
  for name in os.listdir("/proc"):
    if not name.isdigit():
      continue
    try:
      with open("/proc/%s/stat" % name) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
      continue
    pid = int(name)
    children.setdefault(int(fields[1]), []).append(pid)
    rss[pid] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
  total, stack = 0, [root_pid]
  while stack:
    pid = stack.pop()
    total += rss.get(pid, 0)
    stack.extend(children.get(pid, []))
  return total


def _spin(_):
  start = time.time()
  total = 0
  for i in range(3_000_000):
    total += i
  return time.time() - start


def effective_cores(workers):
  """How many CPU-bound processes really run at once now (shared machine)."""
  single = _spin(0)
  with multiprocessing.Pool(workers) as pool:
    start = time.time()
    pool.map(_spin, range(workers))
    return workers * single / (time.time() - start)


def run(cmd):
  """Runs cmd; returns (seconds, CPU seconds, peak tree RSS, stderr text)."""
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", PYTHONPATH=REPO)
  start = time.time()
  with tempfile.TemporaryFile() as err:
    proc = subprocess.Popen(
      cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=err
    )
    peak = 0
    while True:
      pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
      if pid:
        break
      peak = max(peak, _tree_rss_bytes(proc.pid))
      time.sleep(0.02)
    seconds = time.time() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    err.seek(0)
    text = err.read().decode("utf-8", "replace")
  if proc.returncode:
    sys.exit("failed: %s\n%s" % (" ".join(cmd), text[-2000:]))
  # CPU of the process and its reaped workers: load-independent cost.
  return seconds, usage.ru_utime + usage.ru_stime, peak, text


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument(
    "--corpus",
    default=os.path.join(
      REPO, "..", "shared", "data", "corpus", "tiny_pretrain_corpus.txt"
    ),
  )
  parser.add_argument(
    "--vocab_file",
    default=os.path.join(REPO, "tests", "fixtures", "vocab_uncased.txt"),
  )
  parser.add_argument("--workers", type=int, default=2)
  parser.add_argument("--original_script", default=None)
  parser.add_argument(
    "--original_rate",
    type=float,
    default=2000.0,
    help="instances/s of the original if not timed here",
  )
  args = parser.parse_args()

  with tempfile.TemporaryDirectory(prefix="pretraining_bench_") as out_dir:
    _benchmark(args, out_dir)


def _benchmark(args, out_dir):
  """Runs every mode, writing into out_dir; prints the table and ratios."""
  common = ["--input_file=" + args.corpus, "--vocab_file=" + args.vocab_file]
  module = [sys.executable, "-m", "data_prep.create_pretraining_data"]
  runs = [
    ("faithful", module + common + ["--num_workers=0"]),
    ("scalable", module + common + ["--num_workers=%d" % args.workers]),
  ]
  if args.original_script:
    runs.insert(
      0, ("original", [sys.executable, args.original_script] + common)
    )
  print(
    "load average before: %.2f %.2f %.2f; %d processes get %.1f cores"
    % (os.getloadavg() + (args.workers, effective_cores(args.workers)))
  )
  rates = {}
  for name, cmd in runs:
    cmd = cmd + ["--output_file=%s/%s.tfrecord" % (out_dir, name)]
    seconds, cpu, peak, text = run(cmd)
    found = _SUMMARY.findall(text)
    instances = int(found[-1][1]) if found else _count_from_log(text)
    rates[name] = instances / seconds
    print(
      "%-9s %7d instances in %6.2f s = %7.0f instances/s (CPU %6.2f s),"
      " peak RSS %5.0f MB"
      % (name, instances, seconds, rates[name], cpu, peak / 2**20)
    )
  base = rates.get("original", args.original_rate)
  print("load average after: %.2f %.2f %.2f" % os.getloadavg())
  print(
    "ratios vs original (%.0f/s%s): faithful %.1fx, scalable %.1fx; "
    "scalable/faithful %.1fx"
    % (
      base,
      "" if "original" in rates else ", given",
      rates["faithful"] / base,
      rates["scalable"] / base,
      rates["scalable"] / rates["faithful"],
    )
  )


def _count_from_log(text):
  """The original logs 'Wrote N total instances'."""
  found = re.findall(r"Wrote (\d+) total instances", text)
  return int(found[-1]) if found else 0


if __name__ == "__main__":
  main()
