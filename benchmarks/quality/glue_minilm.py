r"""Fine-tunes the real pretrained MiniLM on GLUE MRPC and STS-B (not CI).

Converts the HuggingFace all-MiniLM-L6-v2 folder to an original-format
checkpoint with `bert_tf.convert_checkpoint`, then runs run_classifier.py
with the BERT paper's GLUE recipe (3 epochs, lr 2e-5, batch 32, seq 128) on
each task's train set and evaluates on dev. Prints and saves (JSON) the dev
metrics and wall times. --eval_every_steps also records the dev metrics
during training, for `python -m bert_tf.plot_run --output_dir=<work_dir>/mrpc`.

    python benchmarks/quality/glue_minilm.py --tasks=mrpc,sts-b \
      --glue_dir=../shared/data/glue \
      --model_dir=../shared/models/all-MiniLM-L6-v2 --work_dir=/tmp/glue
    python benchmarks/quality/glue_minilm.py --tasks=mrpc \
      --dtype=mixed_bfloat16 \
      --seed=1 --work_dir=/tmp/glue_bf16
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

flags.DEFINE_list("tasks", ["mrpc", "sts-b"], "Tasks to fine-tune, in order.")
flags.DEFINE_string(
  "glue_dir",
  os.path.join(_SHARED, "data", "glue"),
  "Folder with MRPC/ and STS-B/ (GLUE TSVs).",
)
flags.DEFINE_string(
  "model_dir",
  os.path.join(_SHARED, "models", "all-MiniLM-L6-v2"),
  "HuggingFace BERT folder (config.json, safetensors).",
)
flags.DEFINE_string(
  "work_dir",
  "/tmp/glue_minilm",
  "Converted checkpoint and one output dir per task.",
)
flags.DEFINE_integer("max_seq_length", 128, "Sequence length.")
flags.DEFINE_integer("train_batch_size", 32, "Training batch size.")
flags.DEFINE_float("learning_rate", 2e-5, "Peak learning rate.")
flags.DEFINE_float("num_train_epochs", 3.0, "Training epochs.")
flags.DEFINE_integer("seed", None, "Passed on as --seed.")
flags.DEFINE_enum(
  "dtype",
  "float32",
  ["float32", "mixed_bfloat16"],
  "Passed on as --dtype (training and evaluation precision).",
)
flags.DEFINE_integer(
  "eval_every_steps",
  None,
  "Passed on: dev evaluation during training "
  "(eval_history.jsonl, TensorBoard in <task>/eval/).",
)
flags.DEFINE_string(
  "best_metric", None, "Passed on with --eval_every_steps: keep <task>/best/."
)

_DATA_DIRS = {
  "mrpc": "MRPC",
  "sts-b": "STS-B",
  "cola": "CoLA",
  "sst-2": "SST-2",
  "rte": "RTE",
}


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


def _fine_tune(task, ckpt_dir):
  output_dir = os.path.join(FLAGS.work_dir, task)
  args = [
    "run_classifier.py",
    "--task_name=" + task,
    "--data_dir=" + os.path.join(FLAGS.glue_dir, _DATA_DIRS[task]),
    "--vocab_file=" + os.path.join(ckpt_dir, "vocab.txt"),
    "--bert_config_file=" + os.path.join(ckpt_dir, "bert_config.json"),
    "--init_checkpoint=" + os.path.join(ckpt_dir, "bert_model.ckpt"),
    "--do_lower_case",
    "--do_train",
    "--do_eval",
    "--max_seq_length=%d" % FLAGS.max_seq_length,
    "--train_batch_size=%d" % FLAGS.train_batch_size,
    "--learning_rate=%g" % FLAGS.learning_rate,
    "--num_train_epochs=%g" % FLAGS.num_train_epochs,
    "--output_dir=" + output_dir,
    "--noprogress",
    # Only for a loss/throughput log line every 50 steps.
    "--iterations_per_loop=50",
  ]
  if FLAGS.seed is not None:
    args.append("--seed=%d" % FLAGS.seed)
  args.append("--dtype=" + FLAGS.dtype)
  if FLAGS.eval_every_steps:
    args.append("--eval_every_steps=%d" % FLAGS.eval_every_steps)
  if FLAGS.best_metric:
    args.append("--best_metric=" + FLAGS.best_metric)
  start = time.time()
  _run(args)
  seconds = time.time() - start
  with open(os.path.join(output_dir, "eval_results.txt")) as f:
    results = dict(line.strip().split(" = ") for line in f if line.strip())
  return dict(
    results, task=task, dtype=FLAGS.dtype, wall_seconds=round(seconds, 1)
  )


def main(_):
  os.makedirs(FLAGS.work_dir, exist_ok=True)
  ckpt_dir = _convert()
  summary = []
  for task in FLAGS.tasks:
    summary.append(_fine_tune(task.lower(), ckpt_dir))
    print(json.dumps(summary[-1]), flush=True)
  with open(os.path.join(FLAGS.work_dir, "summary.json"), "w") as f:
    json.dump(summary, f, indent=2)


if __name__ == "__main__":
  app.run(main)
