"""Plots pretraining_curve.py's curve.csv (needs matplotlib only).

    python benchmarks/quality/plot_pretraining_curve.py out/pretraining_curve \
      out/pretraining_curve.png
"""

import csv
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top


def main(work_dir, png_path):
  with open(os.path.join(work_dir, "curve.csv")) as f:
    rows = [{k: float(v) for k, v in row.items()} for row in csv.DictReader(f)]
  with open(os.path.join(work_dir, "summary.json")) as f:
    baseline = json.load(f)["unigram_baseline_accuracy"]
  steps = [r["step"] for r in rows]
  fig, (loss_ax, acc_ax) = plt.subplots(1, 2, figsize=(10, 4))
  loss_ax.plot(steps, [r["masked_lm_loss"] for r in rows], "o-")
  loss_ax.set(
    xlabel="step",
    ylabel="held-out masked LM loss",
    title="Masked LM loss (held out)",
  )
  acc_ax.plot(
    steps, [r["masked_lm_accuracy"] for r in rows], "o-", label="model"
  )
  acc_ax.axhline(
    baseline,
    color="gray",
    linestyle="--",
    label="unigram baseline (%.3f)" % baseline,
  )
  acc_ax.set(
    xlabel="step",
    ylabel="held-out masked LM accuracy",
    title="Masked LM accuracy (held out)",
  )
  acc_ax.legend()
  fig.tight_layout()
  fig.savefig(png_path, dpi=100)
  print("wrote", png_path)


if __name__ == "__main__":
  if len(sys.argv) != 3:
    sys.exit("usage: plot_pretraining_curve.py RUN_DIR PNG_PATH")
  main(sys.argv[1], sys.argv[2])
