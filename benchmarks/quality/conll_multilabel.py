r"""Multi-label classification on real data: CoNLL-2003 sentences labelled
with the set of entity types they contain (not CI).

Builds train/dev/test TSVs (`label set<TAB>sentence`, e.g. `LOC,PER<TAB>...`,
an empty set for a sentence without entities) from the CoNLL-2003 files,
converts the HuggingFace all-MiniLM-L6-v2 folder with
`bert_tf.convert_checkpoint`, fine-tunes it with
`run_classifier.py --task_name=tsv --multi_label` (dev evaluated during
training), and prints the dev metrics next to constant baselines scored
with the same function: the majority label set of the training data, the
most frequent single label, and the constant set with the best training
micro-F1.

    python -m benchmarks.quality.conll_multilabel --num_train=5000 \
      --work_dir=/tmp/conll_multilabel
"""

import collections
import json
import os
import subprocess
import sys
import time

from absl import app
from absl import flags
import numpy as np

from bert_tf.tasks.glue_metrics import multi_label_metrics

FLAGS = flags.FLAGS
_REPO = os.path.dirname(
  os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
)
_SHARED = os.path.join(_REPO, "..", "shared")
LABELS = ("LOC", "MISC", "ORG", "PER")

flags.DEFINE_string(
  "conll_dir",
  os.path.join(_SHARED, "data", "conll2003"),
  "Folder with CoNLL-2003 train.txt, valid.txt, test.txt.",
)
flags.DEFINE_string(
  "model_dir",
  os.path.join(_SHARED, "models", "all-MiniLM-L6-v2"),
  "HuggingFace BERT folder (config.json, safetensors).",
)
flags.DEFINE_string(
  "work_dir",
  "/tmp/conll_multilabel",
  "TSVs, converted checkpoint and the run's output_dir.",
)
flags.DEFINE_integer("num_train", 5000, "First N training sentences.")
flags.DEFINE_integer("num_test", 500, "First N test sentences to predict.")
flags.DEFINE_integer("max_seq_length", 64, "Sequence length.")
flags.DEFINE_integer("train_batch_size", 32, "Training batch size.")
flags.DEFINE_float("learning_rate", 1e-4, "Peak learning rate.")
flags.DEFINE_float("num_train_epochs", 1.0, "Training epochs.")
flags.DEFINE_integer("eval_every_steps", 50, "Dev evaluation interval.")


def read_conll(path):
  """[(words, label set)] per sentence; -DOCSTART- lines are skipped."""
  sentences, words, types = [], [], set()
  with open(path, encoding="utf-8") as f:
    for line in f:
      parts = line.split()
      if not parts or parts[0] == "-DOCSTART-":
        if words:
          sentences.append((words, types))
        words, types = [], set()
        continue
      words.append(parts[0])
      if parts[-1] != "O":  # B-PER, I-LOC, ...
        types.add(parts[-1][2:])
  if words:
    sentences.append((words, types))
  return sentences


def write_tsv(path, sentences):
  with open(path, "w", encoding="utf-8") as f:
    for words, types in sentences:
      f.write("%s\t%s\n" % (",".join(sorted(types)), " ".join(words)))


def _vectors(sets):
  return np.array([[int(label in s) for label in LABELS] for s in sets])


def baselines(train_sets, dev_sets):
  """Dev micro/macro F1 of constant predictions chosen on the train sets."""

  def score(constant, sets):
    return multi_label_metrics(
      np.tile(_vectors([constant]), (len(sets), 1)).astype(float),
      _vectors(sets),
      LABELS,
    )

  counts = collections.Counter(frozenset(s) for s in train_sets)
  label_counts = collections.Counter(l for s in train_sets for l in s)
  candidates = [
    frozenset(LABELS[i] for i in range(4) if mask >> i & 1)
    for mask in range(16)
  ]
  best = max(candidates, key=lambda c: score(c, train_sets)["eval_micro_f1"])
  out = {}
  for name, constant in (
    ("majority_set", counts.most_common(1)[0][0]),
    ("most_frequent_label", {label_counts.most_common(1)[0][0]}),
    ("best_constant_set", best),
  ):
    metrics = score(constant, dev_sets)
    out[name] = {
      "set": sorted(constant),
      "micro_f1": round(metrics["eval_micro_f1"], 4),
      "macro_f1": round(metrics["eval_macro_f1"], 4),
    }
  return out


def _run(args):
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
  print("+ " + " ".join(args), flush=True)
  subprocess.run([sys.executable] + args, cwd=_REPO, env=env, check=True)


def main(_):
  data_dir = os.path.join(FLAGS.work_dir, "data")
  os.makedirs(data_dir, exist_ok=True)
  train = read_conll(os.path.join(FLAGS.conll_dir, "train.txt"))
  train = train[: FLAGS.num_train]
  dev = read_conll(os.path.join(FLAGS.conll_dir, "valid.txt"))
  test = read_conll(os.path.join(FLAGS.conll_dir, "test.txt"))
  for name, sentences in (
    ("train", train),
    ("dev", dev),
    ("test", test[: FLAGS.num_test]),
  ):
    write_tsv(os.path.join(data_dir, name + ".tsv"), sentences)
  ckpt_dir = os.path.join(FLAGS.work_dir, "minilm_ckpt")
  if not os.path.exists(os.path.join(ckpt_dir, "bert_model.ckpt.index")):
    _run(
      [
        "-m",
        "bert_tf.convert_checkpoint",
        "--input=" + FLAGS.model_dir,
        "--input_format=hf",
        "--output_dir=" + ckpt_dir,
      ]
    )
  output_dir = os.path.join(FLAGS.work_dir, "run")
  start = time.time()
  _run(
    [
      "run_classifier.py",
      "--task_name=tsv",
      "--multi_label",
      "--labels=" + ",".join(LABELS),
      "--label_column=0",
      "--text_a_column=1",
      "--data_dir=" + data_dir,
      "--vocab_file=" + os.path.join(ckpt_dir, "vocab.txt"),
      "--bert_config_file=" + os.path.join(ckpt_dir, "bert_config.json"),
      "--init_checkpoint=" + os.path.join(ckpt_dir, "bert_model.ckpt"),
      "--do_lower_case",
      "--do_train",
      "--do_eval",
      "--do_predict",
      "--max_seq_length=%d" % FLAGS.max_seq_length,
      "--train_batch_size=%d" % FLAGS.train_batch_size,
      "--eval_batch_size=64",
      "--predict_batch_size=64",
      "--learning_rate=%g" % FLAGS.learning_rate,
      "--num_train_epochs=%g" % FLAGS.num_train_epochs,
      "--eval_every_steps=%d" % FLAGS.eval_every_steps,
      "--best_metric=eval_micro_f1",
      "--output_dir=" + output_dir,
      "--noprogress",
      "--iterations_per_loop=25",
    ]
  )
  seconds = time.time() - start
  with open(os.path.join(output_dir, "eval_results.txt")) as f:
    results = dict(line.strip().split(" = ") for line in f if line.strip())
  summary = {
    "train_sentences": len(train),
    "dev_sentences": len(dev),
    "dev": results,
    "wall_seconds": round(seconds, 1),
    "baselines": baselines([s for _, s in train], [s for _, s in dev]),
  }
  print(json.dumps(summary, indent=2))
  with open(os.path.join(FLAGS.work_dir, "summary.json"), "w") as f:
    json.dump(summary, f, indent=2)


if __name__ == "__main__":
  app.run(main)
