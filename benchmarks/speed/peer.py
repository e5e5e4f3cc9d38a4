r"""bert_tf against HF PyTorch on the same CPU, side by side in one run.

The same model, shapes and dtypes on both sides, each side and dtype in its
own worker process (`peer_worker.py`), measured in interleaved rounds (the
side that goes first alternates) so that load from other processes hits
all alike; tables give MEDIANS over rounds with the min-max spread, and the
ratio of the medians with the range of the per-round ratios.

  inference: BERT-Base (random init) with the SQuAD span head, forward pass,
    examples/s; bert_tf's model in a tf.function against
    BertForQuestionAnswering (sdpa attention, tanh GELU as the original),
    bfloat16 = Keras' mixed_bfloat16 against torch.autocast(bfloat16).
  training: one step of the same model on the span loss: bert_tf's Trainer
    loop (AdamWeightDecay, clipping) against AdamW + clip_grad_norm_.
  serving: all-MiniLM-L6-v2 with a 2-label head (random, the same values on
    both sides), raw MRPC dev pairs in: the SavedModel of
    `export_saved_model --task=classifier` (in-graph tokenizer; bfloat16:
    `--dtype=bfloat16`) against BertTokenizerFast +
    BertForSequenceClassification, both truncating to --max_seq_length
    and running on the request's longest row (HF: padding="longest").
    Single-request p50 / p99 latency and batch-32 pairs/s.

`--previous=COMMIT` adds bert_tf at that commit as a third side (its tree
extracted with `git archive`; same Python and packages). Every table is
printed with the CPU's name and ISA flags, and the load average.

    pip install -r requirements-bench.txt   # torch CPU build, transformers
    python -m benchmarks.speed.peer --measures=inference,training,serving \
      --rounds=5 --previous=6b168fd --output_json=/tmp/peer.json
"""

import json
import os
import subprocess
import sys

from absl import app
from absl import flags

from benchmarks.speed import peer_serving
from benchmarks.speed import peer_table

_REPO = peer_serving.REPO
_SHARED = os.path.join(_REPO, "..", "shared")
FLAGS = flags.FLAGS


def define_flags():
  flags.DEFINE_list(
    "measures", ["inference", "training", "serving"], "What to time."
  )
  flags.DEFINE_list("dtype", ["float32", "bfloat16"], "Dtypes, interleaved.")
  flags.DEFINE_list("shapes", ["128x8", "128x32", "384x8"], "SEQxBATCH.")
  flags.DEFINE_integer("rounds", 5, "Interleaved rounds (medians).")
  flags.DEFINE_integer("batches", 2, "Forward batches per measurement.")
  flags.DEFINE_integer("steps", 1, "Training steps per measurement.")
  flags.DEFINE_string("previous", None, "Also time bert_tf at this commit.")
  flags.DEFINE_list(
    "torch_threads",
    ["default"],
    "One torch side per entry: 'default' (torch's own choice, one per "
    "core) or a thread count. On a loaded machine OpenMP's barriers wait "
    "for descheduled threads; 1 thread needs none.",
  )
  flags.DEFINE_string("work_dir", "/tmp/peer_bench", "Exports, logs, trees.")
  flags.DEFINE_string(
    "model_dir",
    os.path.join(_SHARED, "models", "all-MiniLM-L6-v2"),
    "HF folder of the serving model.",
  )
  flags.DEFINE_string(
    "mrpc_dev",
    os.path.join(_SHARED, "data", "glue", "MRPC", "dev.tsv"),
    "Request texts.",
  )
  flags.DEFINE_integer("max_seq_length", 128, "Serving sequence length.")
  flags.DEFINE_integer("requests", 200, "Single requests per side and dtype.")
  flags.DEFINE_integer("serving_rounds", 3, "Batch-32 passes over dev.")
  flags.DEFINE_string("output_json", None, "Where to write every number.")
  flags.DEFINE_bool(
    "serving_env",
    True,
    "Run bert_tf's serving workers (--measures=serving alone) with "
    "SERVING_ENV (peer_serving.py), the serving process settings "
    "docs/serving.md recommends.",
  )


class Worker:
  """One side in one dtype: a peer_worker.py process."""

  def __init__(self, name, side, dtype, tree, threads=None):
    self.name, self.side, self.dtype, self.tree = name, side, dtype, tree
    log = open(os.path.join(FLAGS.work_dir, "%s_%s.log" % (name, dtype)), "w")
    env = dict(os.environ, PYTHONPATH=tree, TF_CPP_MIN_LOG_LEVEL="2")
    env.update(peer_serving.serving_env(side))
    if threads:
      env["PEER_TORCH_THREADS"] = str(threads)
    self.process = subprocess.Popen(
      [
        sys.executable,
        os.path.join(_REPO, "benchmarks", "speed", "peer_worker.py"),
      ]
      + [side, dtype],
      cwd=tree,
      env=env,
      stdin=subprocess.PIPE,
      stdout=subprocess.PIPE,
      stderr=log,
      text=True,
    )

  def ask(self, **request):
    try:
      self.process.stdin.write(json.dumps(request) + "\n")
      self.process.stdin.flush()
      line = self.process.stdout.readline()
    except BrokenPipeError:
      line = ""
    if not line:
      raise RuntimeError(
        "worker %s %s died (exit code %s: -9 is often the OOM killer; "
        "fewer --dtype or --torch_threads entries per run hold fewer "
        "models); its log is in %s"
        % (self.name, self.dtype, self.process.wait(), FLAGS.work_dir)
      )
    return json.loads(line)

  def close(self):
    try:
      self.process.stdin.close()
    except BrokenPipeError:
      pass
    self.process.wait()


def _sides():
  """[(name, side, tree, torch threads)]: bert_tf, the previous commit's,
  torch per --torch_threads (named torch, torch_1t, ...)."""
  sides = [("bert_tf", "bert_tf", _REPO, None)]
  if FLAGS.previous:
    tree = os.path.join(FLAGS.work_dir, "tree_" + FLAGS.previous)
    if not os.path.isdir(tree):
      os.makedirs(tree)
      archive = subprocess.run(
        ["git", "-C", _REPO, "archive", FLAGS.previous],
        check=True,
        capture_output=True,
      ).stdout
      subprocess.run(["tar", "-x", "-C", tree], input=archive, check=True)
    sides.append(("bert_tf@" + FLAGS.previous, "bert_tf", tree, None))
  for threads in FLAGS.torch_threads:
    if threads == "default":
      sides.append(("torch", "torch", _REPO, None))
    else:
      sides.append(("torch_%st" % threads, "torch", _REPO, int(threads)))
  return sides


def _print_table(title, names, rows, loads):
  """rows: [(label, {side name: [values per round]})]; higher is better."""
  print("\n### %s\n%s" % (title, peer_table.cpu_line()))
  others = [n for n in names if n != "bert_tf"]
  print(
    "| case | "
    + " | ".join("%s median [min–max]" % n for n in names)
    + " | "
    + " | ".join("bert_tf ÷ %s [per round]" % n for n in others)
    + " |"
  )
  print("|---" * (1 + len(names) + len(others)) + "|")
  for label, values in rows:
    cells = [peer_table.spread(values[n]) for n in names]
    cells += [peer_table.ratio(values["bert_tf"], values[n]) for n in others]
    print("| %s | %s |" % (label, " | ".join(cells)))
  print(
    "load average (1 min) per round: %s; the machine was shared"
    % ", ".join("%.1f" % x for x in loads)
  )


def run_model_measure(measure, sides, workers, results):
  """Inference or training, every shape and dtype, interleaved rounds."""
  repeats = FLAGS.batches if measure == "inference" else FLAGS.steps
  shapes = [tuple(map(int, s.split("x"))) for s in FLAGS.shapes]
  cases = [(s, d) for s in shapes for d in FLAGS.dtype]
  names = [name for name, *_ in sides]
  for shape, dtype in cases:  # builds and warms up, untimed
    for name in names:
      workers[(name, dtype)].ask(op=measure, shape=shape, repeats=1)
  values = {case: {n: [] for n in names} for case in cases}
  loads = []
  for r in range(FLAGS.rounds):
    loads.append(os.getloadavg()[0])
    for shape, dtype in cases:
      for name in peer_table.rotated(names, r):
        rates = workers[(name, dtype)].ask(
          op=measure, shape=shape, repeats=repeats
        )["rates"]
        rate = len(rates) / sum(1 / x for x in rates)
        values[(shape, dtype)][name].append(rate)
        print(
          "round %d %s %s %dx%d %s: %.2f examples/s"
          % (r + 1, measure, dtype, shape[0], shape[1], name, rate),
          flush=True,
        )
  rows = [
    ("%s %dx%d" % (dtype, *shape), values[(shape, dtype)])
    for shape, dtype in cases
  ]
  _print_table(
    "%s, BERT-Base + SQuAD head, examples/s" % measure, names, rows, loads
  )
  results[measure] = {"rows": rows, "loads": loads}
  for worker in workers.values():
    worker.ask(op="drop")


def main(argv):
  del argv
  os.makedirs(FLAGS.work_dir, exist_ok=True)
  print(peer_table.cpu_line(), flush=True)
  sides = _sides()
  workers = {
    (name, dtype): Worker(name, side, dtype, tree, threads)
    for name, side, tree, threads in sides
    for dtype in FLAGS.dtype
  }
  results = {"cpu": peer_table.cpu_line(), "flags": FLAGS.flag_values_dict()}
  try:
    for measure in FLAGS.measures:
      if measure == "serving":
        peer_serving.run_serving(sides, workers, results)
      else:
        run_model_measure(measure, sides, workers, results)
  finally:
    for worker in workers.values():
      worker.close()
  if FLAGS.output_json:
    with open(FLAGS.output_json, "w") as f:
      json.dump(results, f, indent=1)


if __name__ == "__main__":
  define_flags()
  app.run(main)
