r"""The table and the curve of examples/from_scratch.sh.

Reads the script's output folder: the held-out records, the pre-training
checkpoints (`model/pretrain/ckpt-N`), the SST-2 runs
(`sst2/step-N/seed-S/eval_results.txt`, step 0 = random init) and the
timings (`times.tsv`: step, wall, user and system seconds). Scores every
checkpoint on the held-out records (masked-LM accuracy weighted by
masked_lm_weights, next-sentence accuracy), and the unigram baseline: always
predict the commonest masked token of the training records. Writes
`results.json`, prints a Markdown table and draws `curve.png`.

    python examples/from_scratch_report.py --out_dir=out/from_scratch
"""

import argparse
import collections
import glob
import json
import os
import statistics
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

# pylint: disable=g-import-not-at-top,wrong-import-position
import matplotlib

matplotlib.use("Agg")
from matplotlib import pyplot as plt
import tensorflow as tf

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bert_tf.checkpoints.engine_checkpoint import restore_engine_checkpoint
from bert_tf.modeling.bert_config import BertConfig
from bert_tf.tasks import pretraining as pretraining_task
from bert_tf.training import input_pipeline

_SEQ, _PRED = 128, 20


def _batches(path, batch_size=64):
  specs = pretraining_task.feature_spec(_SEQ, _PRED)
  return input_pipeline.eval_dataset([path], specs, batch_size)


def masked_token_counts(path):
  counts = collections.Counter()
  for batch in _batches(path, 256):
    real = batch["masked_lm_weights"].numpy() > 0
    counts.update(batch["masked_lm_ids"].numpy()[real].tolist())
  return counts


def nsp_majority(path):
  """The share of the commonest next-sentence label (constant guess)."""
  labels = collections.Counter()
  for batch in _batches(path, 256):
    labels.update(batch["next_sentence_labels"].numpy().ravel().tolist())
  return max(labels.values()) / sum(labels.values())


def unigram_baseline(train_path, heldout_path):
  """Held-out accuracy of always predicting the commonest training token."""
  top_id, _ = masked_token_counts(train_path).most_common(1)[0]
  held = masked_token_counts(heldout_path)
  return held[top_id] / sum(held.values()), sum(held.values())


def heldout_curve(model_dir, heldout_path, cache_path):
  """{step: {masked_lm_accuracy, next_sentence_accuracy, ...}}, cached."""
  cache = {}
  if os.path.exists(cache_path):
    cache = {int(k): v for k, v in json.load(open(cache_path)).items()}
  config = BertConfig.from_json_file(
    os.path.join(model_dir, "bert_config.json")
  )
  model = pretraining_task.PretrainingModel(config)
  step_fn = tf.function(
    lambda f: pretraining_task.pretraining_metrics(f, model(f, training=False)),
    reduce_retracing=True,
  )
  step_fn(next(iter(_batches(heldout_path))))  # builds the model
  prefixes = {0: None}  # step 0: the random init
  for index in glob.glob(os.path.join(model_dir, "pretrain", "ckpt-*.index")):
    prefix = index[: -len(".index")]
    prefixes[int(prefix.rsplit("-", 1)[1])] = prefix
  for step, prefix in sorted(prefixes.items()):
    if step in cache:
      continue
    if prefix:
      restore_engine_checkpoint(model, prefix)
    totals = collections.defaultdict(float)
    for features in _batches(heldout_path):
      for name, (num, den) in step_fn(features).items():
        totals[name] += float(tf.reduce_sum(num))
        totals[name + "/den"] += float(tf.reduce_sum(den))
    cache[step] = {
      n: totals[n] / totals[n + "/den"]
      for n in (
        "masked_lm_accuracy",
        "masked_lm_loss",
        "next_sentence_accuracy",
      )
    }
  with open(cache_path, "w") as f:
    json.dump(cache, f, indent=2)
  return cache


def sst2_runs(out_dir):
  """{step: [dev accuracy per seed]} from sst2/step-N/seed-S."""
  runs = collections.defaultdict(list)
  pattern = os.path.join(
    out_dir, "sst2", "step-*", "seed-*", "eval_results.txt"
  )
  for path in sorted(glob.glob(pattern)):
    step = int(path.split(os.sep)[-3].split("-")[1])
    values = dict(l.strip().split(" = ") for l in open(path) if " = " in l)
    runs[step].append(float(values["eval_accuracy"]))
  return dict(runs)


def timings(out_dir):
  """{phase: [wall, cpu]} summed over times.tsv (phase: label up to ':')."""
  phases = collections.defaultdict(lambda: [0.0, 0.0])
  for line in open(os.path.join(out_dir, "times.tsv")):
    label, wall, user, system = line.rstrip("\n").split("\t")
    phase = phases[label.split(":")[0]]
    phase[0] += float(wall)
    phase[1] += float(user) + float(system)
  return dict(phases)


def _mean_sd(values):
  sd = statistics.stdev(values) if len(values) > 1 else 0.0
  return statistics.mean(values), sd


def plot(path, curve, runs, baseline, majority, cpu_per_step):
  """SST-2 dev accuracy and held-out accuracy against pre-training steps."""
  fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.4))
  steps = sorted(runs)
  means = [_mean_sd(runs[s]) for s in steps]
  for s in steps:
    left.plot([s] * len(runs[s]), runs[s], ".", color="0.6")
  left.errorbar(
    steps,
    [m for m, _ in means],
    [sd for _, sd in means],
    marker="o",
    capsize=3,
    label="fine-tuned, mean ± sd (grey: seeds)",
  )
  if 0 in runs:  # the random init's band, across the plot
    mean, sd = _mean_sd(runs[0])
    left.axhspan(mean - sd, mean + sd, color="C3", alpha=0.15)
    left.axhline(mean, color="C3", ls="--", label="random init, mean ± sd")
  left.set(
    xlabel="pre-training steps (0 = random init)", ylabel="SST-2 dev accuracy"
  )
  left.set_title("SST-2 dev after fine-tuning")
  left.legend(loc="upper right", fontsize="small")
  xs = sorted(curve)
  right.plot(
    xs,
    [curve[s]["masked_lm_accuracy"] for s in xs],
    "o-",
    label="masked-LM accuracy",
  )
  right.axhline(baseline, color="0.4", ls=":", label="unigram baseline")
  right.axhline(2 * baseline, color="0.4", ls="--", label="2 × unigram")
  right.plot(
    xs,
    [curve[s]["next_sentence_accuracy"] for s in xs],
    "s-",
    label="next-sentence accuracy",
  )
  right.axhline(majority, color="C1", ls=":", label="next-sentence majority")
  right.set(xlabel="pre-training steps", ylabel="held-out accuracy")
  right.set_title("pre-training, held-out documents")
  right.legend(loc="center right", fontsize="small")
  for axis in (left, right):
    top = axis.secondary_xaxis(
      "top",
      functions=(
        lambda s: s * cpu_per_step / 60,
        lambda m: m * 60 / cpu_per_step,
      ),
    )
    top.set_xlabel("pre-training CPU minutes")
  fig.tight_layout()
  fig.savefig(path, dpi=110)


def _summary(out, model_dir, times):
  baseline, held_tokens = unigram_baseline(
    os.path.join(model_dir, "train.tfrecord"),
    os.path.join(model_dir, "heldout.tfrecord"),
  )
  curve = heldout_curve(
    model_dir,
    os.path.join(model_dir, "heldout.tfrecord"),
    os.path.join(out, "heldout_curve.json"),
  )
  runs = sst2_runs(out)
  last = max(curve)
  return dict(
    vocab_size=sum(1 for _ in open(os.path.join(model_dir, "vocab.txt"))),
    pretraining_steps=last,
    heldout_masked_tokens=held_tokens,
    unigram_baseline=baseline,
    nsp_majority=nsp_majority(os.path.join(model_dir, "heldout.tfrecord")),
    heldout=curve,
    sst2={
      s: dict(zip(("mean", "sd"), _mean_sd(v)), seeds=v)
      for s, v in runs.items()
    },
    minutes={p: dict(wall=w / 60, cpu=c / 60) for p, (w, c) in times.items()},
    total_minutes=dict(
      wall=sum(w for w, _ in times.values()) / 60,
      cpu=sum(c for _, c in times.values()) / 60,
    ),
  ), runs


def main(argv):
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--out_dir", default="out/from_scratch")
  parser.add_argument("--plot", default=None, help="[OUT_DIR/curve.png]")
  args = parser.parse_args(argv[1:])
  out, model_dir = args.out_dir, os.path.join(args.out_dir, "model")
  times = timings(out)
  results, runs = _summary(out, model_dir, times)
  with open(os.path.join(out, "results.json"), "w") as f:
    json.dump(results, f, indent=2)
  curve, baseline = results["heldout"], results["unigram_baseline"]
  cpu_per_step = times["pretrain"][1] / results["pretraining_steps"]
  plot(
    args.plot or os.path.join(out, "curve.png"),
    curve,
    runs,
    baseline,
    results["nsp_majority"],
    cpu_per_step,
  )

  print(
    "| pre-training steps | held-out masked-LM acc (× unigram) "
    "| held-out NSP acc | SST-2 dev acc, mean ± sd (seeds) |"
  )
  print("|---|---|---|---|")
  for step in sorted(set(runs) | set(curve)):
    h, accs = curve.get(step), runs.get(step)
    print(
      "| %s | %s | %s | %s |"
      % (
        "%d" % step if step else "0 (random init)",
        "%.3f (%.2f×)"
        % (h["masked_lm_accuracy"], h["masked_lm_accuracy"] / baseline)
        if h
        else "–",
        "%.3f" % h["next_sentence_accuracy"] if h else "–",
        "%.3f ± %.3f (%d)" % (_mean_sd(accs) + (len(accs),)) if accs else "–",
      )
    )
  print(
    "\nunigram baseline %.4f over %d held-out masked tokens; next-sentence"
    " majority %.4f"
    % (baseline, results["heldout_masked_tokens"], results["nsp_majority"])
  )
  for phase, (wall, cpu) in list(times.items()) + [
    (
      "total",
      [sum(t[0] for t in times.values()), sum(t[1] for t in times.values())],
    )
  ]:
    print("%-9s wall %5.1f min, CPU %5.1f min" % (phase, wall / 60, cpu / 60))


if __name__ == "__main__":
  main(sys.argv)
