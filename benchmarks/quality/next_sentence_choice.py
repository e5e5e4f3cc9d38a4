r"""Multiple choice on real text: pick a sentence's true successor (not CI).

Builds SWAG-format train/dev CSVs from a one-sentence-per-line corpus with
blank lines between documents (default: ../shared/data/corpus/
tiny_pretrain_corpus.txt): context (`sent1`) = a sentence, gold ending = the
next sentence of the same document, three distractors = sentences of other
documents, the gold at a random position; `sent2` is empty. Train and dev
documents are disjoint (distractors too). Lines under 4 words (headings,
list items) are left out. Then it converts the HuggingFace all-MiniLM-L6-v2
folder with `bert_tf.convert_checkpoint --input_format=hf`, evaluates the
untrained head on dev, fine-tunes with run_multiple_choice.py and reports
dev accuracy against the 25% chance level (JSON, also saved as
summary.json in --work_dir).

The default budget fits ~20 minutes on 2 shared CPU cores: 3,000 training
examples, 1 epoch, seq 96, batch 16, lr 5e-5 (from the paper's grid), 500
dev examples.

    python benchmarks/quality/next_sentence_choice.py --work_dir=/tmp/nsc
"""

import csv
import json
import os
import random
import subprocess
import sys
import time

from absl import app
from absl import flags

_REPO = os.path.dirname(
  os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
)
_SHARED = os.path.join(_REPO, "..", "shared")

FLAGS = flags.FLAGS
flags.DEFINE_string(
  "corpus",
  os.path.join(_SHARED, "data", "corpus", "tiny_pretrain_corpus.txt"),
  "One sentence per line, blank line between documents.",
)
flags.DEFINE_string(
  "model_dir",
  os.path.join(_SHARED, "models", "all-MiniLM-L6-v2"),
  "HuggingFace BERT folder (config.json, safetensors).",
)
flags.DEFINE_string(
  "work_dir",
  "/tmp/next_sentence_choice",
  "Data, converted checkpoint and run outputs.",
)
flags.DEFINE_integer("train_examples", 3000, "Training examples.")
flags.DEFINE_integer("dev_examples", 500, "Dev examples.")
flags.DEFINE_float("dev_documents", 0.2, "Share of documents held out.")
flags.DEFINE_integer("max_seq_length", 96, "Per-choice sequence length.")
flags.DEFINE_integer("train_batch_size", 16, "Training batch size.")
flags.DEFINE_float("learning_rate", 5e-5, "Peak learning rate.")
flags.DEFINE_float("num_train_epochs", 1.0, "Training epochs.")
flags.DEFINE_integer("seed", 12345, "Data sampling and training seed.")

_MIN_WORDS = 4
_HEADER = [
  "",
  "video-id",
  "fold-ind",
  "startphrase",
  "sent1",
  "sent2",
  "gold-source",
  "ending0",
  "ending1",
  "ending2",
  "ending3",
  "label",
]


def read_documents(path):
  """Lists of sentences, one per document."""
  documents = [[]]
  with open(path, encoding="utf-8") as f:
    for line in f:
      line = line.strip()
      if line:
        documents[-1].append(line)
      elif documents[-1]:
        documents.append([])
  return [d for d in documents if d]


def make_examples(documents, count, rng):
  """`count` SWAG rows: (doc id, context, 4 endings, label)."""

  def usable(sentence):
    return len(sentence.split()) >= _MIN_WORDS

  pairs = [
    (d, a, b)
    for d, doc in enumerate(documents)
    for a, b in zip(doc, doc[1:])
    if usable(a) and usable(b)
  ]
  pool = [(d, s) for d, doc in enumerate(documents) for s in doc if usable(s)]
  rows = []
  for d, context, gold in rng.sample(pairs, min(count, len(pairs))):
    distractors = []
    while len(distractors) < 3:
      other, sentence = rng.choice(pool)
      if other != d and sentence not in distractors:
        distractors.append(sentence)
    label = rng.randrange(4)
    rows.append(
      (d, context, distractors[:label] + [gold] + distractors[label:], label)
    )
  return rows


def write_swag_csv(path, rows):
  with open(path, "w", encoding="utf-8", newline="") as f:
    writer = csv.writer(f)
    writer.writerow(_HEADER)
    for i, (d, context, endings, label) in enumerate(rows):
      writer.writerow(
        [i, "doc%d" % d, i, context, context, "", "gold"] + endings + [label]
      )


def build_data(data_dir):
  rng = random.Random(FLAGS.seed)
  documents = read_documents(FLAGS.corpus)
  rng.shuffle(documents)
  held_out = int(len(documents) * FLAGS.dev_documents)
  splits = {
    "val": (documents[:held_out], FLAGS.dev_examples),
    "train": (documents[held_out:], FLAGS.train_examples),
  }
  os.makedirs(data_dir, exist_ok=True)
  sizes = {}
  for name, (docs, count) in splits.items():
    rows = make_examples(docs, count, rng)
    write_swag_csv(os.path.join(data_dir, name + ".csv"), rows)
    sizes[name] = {"documents": len(docs), "examples": len(rows)}
  return sizes


def _run(args):
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
  print("+ " + " ".join(args), flush=True)
  start = time.time()
  subprocess.run([sys.executable] + args, cwd=_REPO, env=env, check=True)
  return round(time.time() - start, 1)


def _eval_results(output_dir):
  with open(os.path.join(output_dir, "eval_results.txt")) as f:
    return dict(line.strip().split(" = ") for line in f if line.strip())


def run_multiple_choice(ckpt_dir, data_dir, output_dir, *args):
  """run_multiple_choice.py with the converted checkpoint; -> (results, s)."""
  seconds = _run(
    [
      "run_multiple_choice.py",
      "--data_dir=" + data_dir,
      "--vocab_file=" + os.path.join(ckpt_dir, "vocab.txt"),
      "--bert_config_file=" + os.path.join(ckpt_dir, "bert_config.json"),
      "--init_checkpoint=" + os.path.join(ckpt_dir, "bert_model.ckpt"),
      "--max_seq_length=%d" % FLAGS.max_seq_length,
      "--do_eval",
      "--eval_batch_size=64",
      "--seed=%d" % FLAGS.seed,
      "--output_dir=" + output_dir,
      "--noprogress",
    ]
    + list(args)
  )
  return _eval_results(output_dir), seconds


def main(_):
  for path in (FLAGS.corpus, FLAGS.model_dir):
    if not os.path.exists(path):
      sys.exit("ERROR: %s: no such file or directory" % path)
  data_dir = os.path.join(FLAGS.work_dir, "data")
  summary = {"data": build_data(data_dir)}
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
  results, seconds = run_multiple_choice(
    ckpt_dir, data_dir, os.path.join(FLAGS.work_dir, "untrained")
  )
  summary["untrained_head"] = dict(results, wall_seconds=seconds)
  results, seconds = run_multiple_choice(
    ckpt_dir,
    data_dir,
    os.path.join(FLAGS.work_dir, "fine_tuned"),
    "--do_train",
    "--train_batch_size=%d" % FLAGS.train_batch_size,
    "--learning_rate=%g" % FLAGS.learning_rate,
    "--num_train_epochs=%g" % FLAGS.num_train_epochs,
    "--iterations_per_loop=25",
  )
  summary["fine_tuned"] = dict(results, wall_seconds=seconds)
  summary["chance"] = 0.25
  summary["recipe"] = {
    name: FLAGS[name].value
    for name in (
      "max_seq_length",
      "train_batch_size",
      "learning_rate",
      "num_train_epochs",
      "seed",
    )
  }
  print(json.dumps(summary, indent=2), flush=True)
  with open(os.path.join(FLAGS.work_dir, "summary.json"), "w") as f:
    json.dump(summary, f, indent=2)


if __name__ == "__main__":
  app.run(main)
