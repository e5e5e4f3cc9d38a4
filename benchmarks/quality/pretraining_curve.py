r"""Pre-training on a real corpus: held-out MLM curve vs the unigram baseline.

Not part of CI (tens of minutes on CPU). Steps:
1. split the corpus into documents (blank-line separated) and hold out every
   20th one (5%);
2. `python -m data_prep.create_pretraining_data` on both parts (original
   algorithm; the held-out part with its own seed);
3. `run_pretraining.py --do_train` with the tiny config, keeping every
   checkpoint;
4. evaluate each checkpoint (and the random init) on the whole held-out file:
   masked-LM loss/accuracy weighted by masked_lm_weights, NSP accuracy;
5. the unigram baseline: always predict the most frequent masked token of the
   training records, scored on the held-out masked tokens;
6. `run_pretraining.py --do_eval` on the held-out file (the CLI's own
   eval_results.txt) and a CSV + JSON summary (plot it with
   benchmarks/quality/plot_pretraining_curve.py).

    .venv/bin/python benchmarks/quality/pretraining_curve.py \
      --corpus=../shared/data/corpus/tiny_pretrain_corpus.txt \
      --work_dir=out/pretraining_curve --num_train_steps=3000
"""

import collections
import csv
import json
import os
import subprocess
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

# pylint: disable=g-import-not-at-top,wrong-import-position
from absl import app
from absl import flags
import tensorflow as tf

REPO = os.path.dirname(
  os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
)
sys.path.insert(0, REPO)

from bert_tf.checkpoints.engine_checkpoint import restore_engine_checkpoint
from bert_tf.modeling.bert_config import BertConfig
from bert_tf.tasks import pretraining as pretraining_task
from bert_tf.tasks.pretraining import pretraining_metrics
from bert_tf.tasks.pretraining import PretrainingModel
from bert_tf.training import input_pipeline

FLAGS = flags.FLAGS
flags.DEFINE_string(
  "corpus", None, "One sentence per line, blank line between documents."
)
flags.DEFINE_string("work_dir", "out/pretraining_curve", "Data, run, CSV.")
flags.DEFINE_string(
  "vocab_file",
  os.path.join(REPO, "examples/data/vocab.txt"),
  "WordPiece vocabulary.",
)
flags.DEFINE_string(
  "bert_config_file",
  os.path.join(REPO, "examples/bert_config_tiny.json"),
  "Model config.",
)
flags.DEFINE_integer("num_train_steps", 3000, "Training steps.")
flags.DEFINE_integer("num_warmup_steps", 300, "Warmup steps.")
flags.DEFINE_float("learning_rate", 1e-3, "Peak learning rate.")
flags.DEFINE_integer("train_batch_size", 32, "Batch size.")
flags.DEFINE_integer("save_checkpoints_steps", 250, "Curve resolution.")
flags.DEFINE_integer("dupe_factor", 10, "Masks per training document.")
flags.DEFINE_integer("holdout_every", 20, "Every n-th document is held out.")

_SEQ, _PRED = 128, 20


def _run(args, log):
  print("+", " ".join(args), flush=True)
  subprocess.run(args, cwd=REPO, check=True, stdout=log, stderr=log)


def split_corpus(corpus, train_path, heldout_path, every):
  """Writes every `every`-th document to heldout; returns both counts."""
  with open(corpus, encoding="utf-8") as f:
    docs = [d.strip("\n") for d in f.read().split("\n\n") if d.strip()]
  parts = {True: [], False: []}
  for i, doc in enumerate(docs):
    parts[i % every == every - 1].append(doc)
  for path, held in ((train_path, False), (heldout_path, True)):
    with open(path, "w", encoding="utf-8") as f:
      f.write("\n\n".join(parts[held]) + "\n")
  return len(parts[False]), len(parts[True])


def _dataset(path, batch_size=64):
  specs = pretraining_task.feature_spec(_SEQ, _PRED)
  return input_pipeline.eval_dataset([path], specs, batch_size)


def masked_token_counts(path):
  counts = collections.Counter()
  for batch in _dataset(path, 256):
    ids = batch["masked_lm_ids"].numpy()[batch["masked_lm_weights"].numpy() > 0]
    counts.update(ids.tolist())
  return counts


def evaluate(step, path):
  """Sum/sum of the `step(features)` metrics over one pass of `path`."""
  totals = collections.defaultdict(float)
  for features in _dataset(path):
    for name, (num, den) in step(features).items():
      totals[name + "/num"] += float(tf.reduce_sum(num))
      totals[name + "/den"] += float(tf.reduce_sum(den))
  names = (
    "masked_lm_loss",
    "masked_lm_accuracy",
    "next_sentence_accuracy",
    "next_sentence_loss",
  )
  return {n: totals[n + "/num"] / totals[n + "/den"] for n in names}


def main(_):
  work = os.path.abspath(FLAGS.work_dir)
  run_dir = os.path.join(work, "run")
  os.makedirs(work, exist_ok=True)
  log = open(os.path.join(work, "subprocess.log"), "a")
  start = time.time()
  texts = {k: os.path.join(work, k + ".txt") for k in ("train", "heldout")}
  records = {k: os.path.join(work, k + ".tfrecord") for k in texts}
  n_train, n_held = split_corpus(
    FLAGS.corpus, texts["train"], texts["heldout"], FLAGS.holdout_every
  )
  print("documents: %d train, %d held out" % (n_train, n_held), flush=True)
  for key, seed, dupe in (
    ("train", 12345, FLAGS.dupe_factor),
    ("heldout", 54321, 2),
  ):
    if os.path.exists(records[key]):  # A rerun resumes.
      continue
    _run(
      [
        sys.executable,
        "-m",
        "data_prep.create_pretraining_data",
        "--input_file=" + texts[key],
        "--output_file=" + records[key],
        "--vocab_file=" + FLAGS.vocab_file,
        "--max_seq_length=%d" % _SEQ,
        "--max_predictions_per_seq=%d" % _PRED,
        "--random_seed=%d" % seed,
        "--dupe_factor=%d" % dupe,
      ],
      log,
    )
  data_seconds = time.time() - start
  _run(
    [
      sys.executable,
      "run_pretraining.py",
      "--do_train",
      "--input_file=" + records["train"],
      "--output_dir=" + run_dir,
      "--bert_config_file=" + FLAGS.bert_config_file,
      "--train_batch_size=%d" % FLAGS.train_batch_size,
      "--num_train_steps=%d" % FLAGS.num_train_steps,
      "--num_warmup_steps=%d" % FLAGS.num_warmup_steps,
      "--learning_rate=%g" % FLAGS.learning_rate,
      "--save_checkpoints_steps=%d" % FLAGS.save_checkpoints_steps,
      "--iterations_per_loop=%d" % FLAGS.save_checkpoints_steps,
      "--keep_checkpoint_max=1000",
      "--seed=1",
      "--noprogress",
    ],
    log,
  )

  train_counts = masked_token_counts(records["train"])
  held_counts = masked_token_counts(records["heldout"])
  top_id, _ = train_counts.most_common(1)[0]
  baseline = held_counts[top_id] / sum(held_counts.values())

  model = PretrainingModel(BertConfig.from_json_file(FLAGS.bert_config_file))
  step = tf.function(
    lambda f: pretraining_metrics(f, model(f, training=False)),
    reduce_retracing=True,
  )
  state = tf.train.get_checkpoint_state(run_dir)
  paths = sorted(
    state.all_model_checkpoint_paths, key=lambda p: int(p.rsplit("-", 1)[1])
  )
  # Throughput between the first and last checkpoint (no tracing time).
  first, last = (os.path.getmtime(p + ".index") for p in (paths[0], paths[-1]))
  steps_per_second = (
    int(paths[-1].rsplit("-", 1)[1]) - int(paths[0].rsplit("-", 1)[1])
  ) / max(last - first, 1e-9)
  rows = [dict(step=0, **evaluate(step, records["heldout"]))]
  for path in paths:
    restore_engine_checkpoint(model, path)
    rows.append(
      dict(
        step=int(path.rsplit("-", 1)[1]), **evaluate(step, records["heldout"])
      )
    )
    print(
      "step %(step)d: held-out masked_lm_loss %(masked_lm_loss).4f, "
      "masked_lm_accuracy %(masked_lm_accuracy).4f, "
      "next_sentence_accuracy %(next_sentence_accuracy).4f" % rows[-1],
      flush=True,
    )

  _run(
    [
      sys.executable,
      "run_pretraining.py",
      "--do_eval",
      "--input_file=" + records["heldout"],
      "--output_dir=" + run_dir,
      "--bert_config_file=" + FLAGS.bert_config_file,
      "--max_eval_steps=100",
    ],
    log,
  )
  with open(os.path.join(work, "curve.csv"), "w", newline="") as f:
    writer = csv.DictWriter(f, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
  summary = dict(
    train_documents=n_train,
    heldout_documents=n_held,
    heldout_masked_tokens=sum(held_counts.values()),
    unigram_baseline_accuracy=baseline,
    unigram_token_id=int(top_id),
    data_seconds=round(data_seconds, 1),
    steps_per_second=round(steps_per_second, 3),
    final=rows[-1],
    flags={
      k: FLAGS[k].value
      for k in (
        "num_train_steps",
        "num_warmup_steps",
        "learning_rate",
        "train_batch_size",
        "dupe_factor",
      )
    },
  )
  with open(os.path.join(work, "summary.json"), "w") as f:
    json.dump(summary, f, indent=2)
  print(json.dumps(summary, indent=2))
  print("cli eval_results.txt (held out, 100 x 8 examples):")
  print(open(os.path.join(run_dir, "eval_results.txt")).read())


if __name__ == "__main__":
  flags.mark_flag_as_required("corpus")
  app.run(main)
