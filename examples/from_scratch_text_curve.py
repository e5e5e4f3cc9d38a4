r"""SST-2 against the amount of pre-training text, over from_scratch.sh runs.

Each run folder is one examples/from_scratch.sh output (after
examples/from_scratch_report.py wrote its `results.json`) with the same
schedule and a different amount of text (`DOC_STRIDE`, `EXTRA_TEXT`). Prints
a table of the training words against SST-2 dev accuracy from random init
and after pre-training (mean ± sd over seeds), fits the gap between them
to log2(words) by least squares (slope ± its standard error), says where the
line reaches 0, and draws the plot.

    python examples/from_scratch_text_curve.py \
      --out_dirs=out/text25,out/text50,out/from_scratch,out/text200 \
      --plot=out/text_curve.png
"""

import argparse
import json
import math
import os
import statistics
import sys

# pylint: disable=g-import-not-at-top,wrong-import-position
import matplotlib

matplotlib.use("Agg")
from matplotlib import pyplot as plt
import numpy as np


def _sd(values):
  return statistics.stdev(values) if len(values) > 1 else 0.0


def run_point(out_dir):
  """(training words, {"random init"|"pre-trained": [accuracy per seed]})."""
  try:
    with open(os.path.join(out_dir, "results.json")) as f:
      results = json.load(f)
    with open(
      os.path.join(out_dir, "data", "train.txt"), encoding="utf-8"
    ) as f:
      words = sum(len(line.split()) for line in f)
    sst2 = results["sst2"]
    arms = {
      "random init": sst2["0"]["seeds"],
      "pre-trained": sst2[str(results["pretraining_steps"])]["seeds"],
    }
  except (OSError, ValueError, KeyError) as e:
    sys.exit(
      "ERROR: %s: not a finished from_scratch.sh run with its report (%r)"
      % (out_dir, e)
    )
  return words, arms


def main(argv):
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--out_dirs", required=True, help="comma-separated")
  parser.add_argument("--plot", default="text_curve.png")
  args = parser.parse_args(argv[1:])
  if not os.path.isdir(os.path.dirname(os.path.abspath(args.plot))):
    sys.exit("ERROR: --plot=%s: no such folder" % args.plot)
  points = sorted(
    (run_point(d) for d in args.out_dirs.split(",")), key=lambda p: p[0]
  )
  if len({words for words, _ in points}) < 2:
    sys.exit("ERROR: --out_dirs: the fit needs runs on two amounts of text")

  print("| training words | random init | pre-trained | gap |")
  print("|---|---|---|---|")
  gaps = []
  for words, arms in points:
    means = {k: statistics.mean(v) for k, v in arms.items()}
    gaps.append(means["pre-trained"] - means["random init"])
    print(
      "| %s | %s | %s | %+.1f points |"
      % (
        f"{words:,}",
        *(
          "%.3f ± %.3f" % (means[k], _sd(arms[k]))
          for k in ("random init", "pre-trained")
        ),
        100 * gaps[-1],
      )
    )
  logs = [math.log2(w) for w, _ in points]
  slope, intercept = np.polyfit(logs, gaps, 1)
  # The slope's standard error needs a residual: three runs or more.
  se = 0.0
  if len(points) > 2:
    residuals = np.array(gaps) - (slope * np.array(logs) + intercept)
    spread = np.sum((np.array(logs) - np.mean(logs)) ** 2)
    se = math.sqrt(np.sum(residuals**2) / (len(points) - 2) / spread)
  print(
    "gap = %+.2f ± %.2f points per doubling of the text"
    % (100 * slope, 100 * se)
  )
  # A line through the runs' centre (mean log2 words, mean gap).
  centre_x, centre_y = np.mean(logs), np.mean(gaps)
  for label, rate in (("fit", slope), ("slope - 1 se", slope - se)):
    crossing = 2 ** (centre_x - centre_y / rate) if rate > 0 else None
    print(
      "  %s: %s"
      % (
        label,
        "0 at about %s words" % f"{crossing:,.0f}"
        if crossing
        else "the gap does not shrink: no crossing",
      )
    )

  fig, axis = plt.subplots(figsize=(6.5, 4.2))
  xs = [w for w, _ in points]
  for i, arm in enumerate(("random init", "pre-trained")):
    values = [a[arm] for _, a in points]
    axis.errorbar(
      xs,
      [statistics.mean(v) for v in values],
      [_sd(v) for v in values],
      marker="os"[i],
      capsize=3,
      label=arm + ", mean ± sd of seeds",
    )
  axis.set_xscale("log", base=2)
  axis.set(xlabel="pre-training text (words)", ylabel="SST-2 dev accuracy")
  axis.set_title("The same schedule on more text")
  axis.legend(fontsize="small")
  fig.tight_layout()
  fig.savefig(args.plot, dpi=110)


if __name__ == "__main__":
  main(sys.argv)
