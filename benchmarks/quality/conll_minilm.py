r"""CoNLL-2003 NER with the real pretrained MiniLM, fine-tuned and
feature-based (not CI; about 10 minutes per mode on 2 idle CPU cores).

Converts the HuggingFace all-MiniLM-L6-v2 folder to an original-format
checkpoint with `bert_tf.convert_checkpoint`, then for each --modes entry
runs run_ner.py on CoNLL-2003 train (with document context, as the paper)
and tags valid.txt and test.txt. Prints and saves (work_dir/summary.json,
one entry per mode, kept across invocations) the dev and test entity F1
and the wall time of each run.

    python benchmarks/quality/conll_minilm.py \
      --modes=fine_tune,concat_last_four \
      --conll_dir=../shared/data/conll2003 \
      --model_dir=../shared/models/all-MiniLM-L6-v2 \
      --work_dir=/tmp/conll_minilm

The default budget is one epoch at max_seq_length 128, batch 32: lr 5e-5
for fine-tuning; for the feature-based modes (frozen encoder, a randomly
initialised two-layer BiLSTM, --lstm_units=256 instead of the paper's 768)
lr 1e-3, since only the new layers train.
"""

import json
import os
import subprocess
import sys
import time

from absl import app
from absl import flags

FLAGS = flags.FLAGS
_REPO = os.path.dirname(
  os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
)
_SHARED = os.path.join(_REPO, "..", "shared")

flags.DEFINE_list(
  "modes",
  ["fine_tune", "concat_last_four"],
  "run_ner.py --feature_mode values to run, in order.",
)
flags.DEFINE_string(
  "conll_dir",
  os.path.join(_SHARED, "data", "conll2003"),
  "Folder with train.txt, valid.txt, test.txt.",
)
flags.DEFINE_string(
  "model_dir",
  os.path.join(_SHARED, "models", "all-MiniLM-L6-v2"),
  "HuggingFace BERT folder (config.json, safetensors).",
)
flags.DEFINE_string(
  "work_dir",
  "/tmp/conll_minilm",
  "Converted checkpoint and one output dir per mode.",
)
flags.DEFINE_integer("max_seq_length", 128, "Window length.")
flags.DEFINE_integer("train_batch_size", 32, "Training batch size.")
flags.DEFINE_float("learning_rate", 5e-5, "Peak learning rate, fine_tune.")
flags.DEFINE_float(
  "feature_learning_rate",
  1e-3,
  "Peak learning rate of the feature-based modes.",
)
flags.DEFINE_float("num_train_epochs", 1.0, "Training epochs.")
flags.DEFINE_integer("lstm_units", 256, "BiLSTM units per direction.")
flags.DEFINE_integer("seed", 12345, "Passed on as --seed.")


def _run(args):
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
  print("+ " + " ".join(args), flush=True)
  subprocess.run([sys.executable] + args, cwd=_REPO, env=env, check=True)


def _convert():
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
  return ckpt_dir


def _results(path):
  with open(path) as f:
    return dict(line.strip().split(" = ") for line in f if line.strip())


def _tag(mode, ckpt_dir):
  output_dir = os.path.join(FLAGS.work_dir, mode)
  learning_rate = (
    FLAGS.learning_rate if mode == "fine_tune" else FLAGS.feature_learning_rate
  )
  args = [
    "run_ner.py",
    "--data_dir=" + FLAGS.conll_dir,
    "--vocab_file=" + os.path.join(ckpt_dir, "vocab.txt"),
    "--bert_config_file=" + os.path.join(ckpt_dir, "bert_config.json"),
    "--init_checkpoint=" + os.path.join(ckpt_dir, "bert_model.ckpt"),
    "--do_lower_case",
    "--do_train",
    "--do_eval",
    "--do_predict",
    "--document_context",
    "--feature_mode=" + mode,
    "--lstm_units=%d" % FLAGS.lstm_units,
    "--max_seq_length=%d" % FLAGS.max_seq_length,
    "--train_batch_size=%d" % FLAGS.train_batch_size,
    "--eval_batch_size=64",
    "--predict_batch_size=64",
    "--learning_rate=%g" % learning_rate,
    "--num_train_epochs=%g" % FLAGS.num_train_epochs,
    "--seed=%d" % FLAGS.seed,
    "--output_dir=" + output_dir,
    "--noprogress",
    "--save_checkpoints_steps=100",
    # Only for a loss/throughput log line every 50 steps.
    "--iterations_per_loop=50",
  ]
  start = time.time()
  _run(args)
  seconds = time.time() - start
  dev = _results(os.path.join(output_dir, "eval_results.txt"))
  test = _results(os.path.join(output_dir, "test_results.txt"))
  return {
    "mode": mode,
    "learning_rate": learning_rate,
    "dev_f1": round(100 * float(dev["eval_f1"]), 1),
    "test_f1": round(100 * float(test["test_f1"]), 1),
    "global_step": int(dev["global_step"]),
    "wall_seconds": round(seconds, 1),
    "dev": dev,
    "test": test,
  }


def main(_):
  os.makedirs(FLAGS.work_dir, exist_ok=True)
  ckpt_dir = _convert()
  path = os.path.join(FLAGS.work_dir, "summary.json")
  summary = {}
  if os.path.exists(path):
    with open(path) as f:
      summary = json.load(f)
  for mode in FLAGS.modes:
    summary[mode] = _tag(mode, ckpt_dir)
    print(
      json.dumps(
        {k: v for k, v in summary[mode].items() if k not in ("dev", "test")}
      ),
      flush=True,
    )
    with open(path, "w") as f:
      json.dump(summary, f, indent=2)


if __name__ == "__main__":
  app.run(main)
