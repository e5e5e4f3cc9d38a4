r"""Serving speed: the exported MiniLM classifier SavedModel (raw text in,
in-graph tokenizer) next to the Python path (FullTokenizer + the original
feature packing + the same Keras model in a tf.function), in one run.

Converts ../shared/models/all-MiniLM-L6-v2 with `python -m
bert_tf.convert_checkpoint --input_format=hf`, adds a 2-label classifier
head (random: speed does not depend on its values; no fine-tuning here),
exports it with `python -m bert_tf.export_saved_model --task=classifier
--task_name=mrpc`, then times, on GLUE MRPC dev sentence pairs at
max_seq_length 128: single-request latency (p50 / p99 over --requests
requests) and batch-32 throughput (pairs/s over --rounds passes of the dev
set), the two paths alternating request by request and batch by batch so
that other load on the machine hits both alike. Both paths are
checked to give the same probabilities first. Prints a table and writes
--output_json.

    python -m benchmarks.speed.serving --work_dir=/tmp/serving_bench
"""

import json
import os
import shutil
import subprocess
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from absl import app  # pylint: disable=g-import-not-at-top
from absl import flags
import numpy as np
import tensorflow as tf
import tensorflow_text  # noqa: F401 (registers the ops)

from benchmarks.speed import peer_table
from bert_tf.checkpoints import checkpoint_io
from bert_tf.modeling.bert_config import BertConfig
from bert_tf.tasks.classification import ClassifierModel
from bert_tf.tokenizers import tokenization
from data_prep.classifier.example import InputExample
from data_prep.classifier.features import convert_single_example

_REPO = os.path.dirname(
  os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
)
_SHARED = os.path.join(_REPO, "..", "shared")
FLAGS = flags.FLAGS


def define_flags():
  flags.DEFINE_string(
    "model_dir",
    os.path.join(_SHARED, "models", "all-MiniLM-L6-v2"),
    "HuggingFace BERT folder.",
  )
  flags.DEFINE_string(
    "mrpc_dev",
    os.path.join(_SHARED, "data", "glue", "MRPC", "dev.tsv"),
    "GLUE MRPC dev.tsv (the request texts).",
  )
  flags.DEFINE_string(
    "work_dir",
    "/tmp/serving_bench",
    "Converted checkpoint and SavedModel (reused).",
  )
  flags.DEFINE_enum(
    "dtype", "float32", ["float32", "bfloat16"], "The export's --dtype."
  )
  flags.DEFINE_integer("max_seq_length", 128, "Sequence length.")
  flags.DEFINE_integer("requests", 200, "Single requests timed per path.")
  flags.DEFINE_integer("rounds", 5, "Passes over dev at batch 32 per path.")
  flags.DEFINE_string("output_json", None, "Where to save the figures.")
  flags.DEFINE_bool(
    "prepare_only",
    False,
    "Only write the checkpoint, its head.npz and the SavedModel "
    "(benchmarks/speed/peer.py).",
  )


_BATCH = 32


def _run(args):
  print("+ python " + " ".join(args), flush=True)
  subprocess.run(
    [sys.executable] + args,
    cwd=_REPO,
    check=True,
    env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"),
  )


def _prepare():
  """Converted MiniLM + a classifier head (TF1) and its SavedModel.

  Also writes the head as `head.npz` (weight [2, H], bias [2]) for the
  HF model of benchmarks/speed/peer.py.
  """
  ckpt_dir = os.path.join(FLAGS.work_dir, "minilm")
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
  config = BertConfig.from_json_file(os.path.join(ckpt_dir, "bert_config.json"))
  model = ClassifierModel(config, 2)
  checkpoint_io.init_from_checkpoint(ckpt_dir, model.tf1_variables())
  head_dir = os.path.join(FLAGS.work_dir, "classifier")
  prefix = os.path.join(head_dir, "bert_model.ckpt")
  if not os.path.exists(prefix + ".index"):
    checkpoint_io.save_tf1_checkpoint(prefix, model.tf1_variables())
    for name in ("bert_config.json", "vocab.txt"):
      shutil.copyfile(
        os.path.join(ckpt_dir, name), os.path.join(head_dir, name)
      )
  else:
    checkpoint_io.init_from_checkpoint(prefix, model.tf1_variables())
  variables = model.tf1_variables()
  np.savez(
    os.path.join(FLAGS.work_dir, "head.npz"),
    weight=variables["output_weights"].numpy(),
    bias=variables["output_bias"].numpy(),
  )
  export_dir = peer_table.export_path(
    FLAGS.work_dir, FLAGS.max_seq_length, FLAGS.dtype
  )
  if not os.path.exists(export_dir):
    _run(
      [
        "-m",
        "bert_tf.export_saved_model",
        "--task=classifier",
        "--task_name=mrpc",
        "--checkpoint=" + prefix,
        "--max_seq_length=%d" % FLAGS.max_seq_length,
        "--dtype=" + FLAGS.dtype,
        "--export_dir=" + export_dir,
      ]
    )
  return model, os.path.join(head_dir, "vocab.txt"), export_dir


def _python_path(model, vocab_file):
  """Raw pairs -> label, the way a Python server would run the model."""
  tokenizer = tokenization.FullTokenizer(vocab_file, do_lower_case=True)
  spec = tf.TensorSpec([None, FLAGS.max_seq_length], tf.int32)

  @tf.function(input_signature=[spec] * 3)
  def probabilities(input_ids, input_mask, segment_ids):
    return model(
      {
        "input_ids": input_ids,
        "input_mask": input_mask,
        "segment_ids": segment_ids,
      }
    )["probabilities"]

  def predict(pairs):
    features = [
      convert_single_example(
        InputExample(str(i), a, b, "0"),
        ["0", "1"],
        FLAGS.max_seq_length,
        tokenizer,
      )
      for i, (a, b) in enumerate(pairs)
    ]
    columns = [
      np.array([getattr(f, k) for f in features], np.int32)
      for k in ("input_ids", "input_mask", "segment_ids")
    ]
    probs = probabilities(*columns).numpy()
    return probs, probs.argmax(-1)

  return predict


def _saved_model_path(export_dir):
  serving = tf.saved_model.load(export_dir).signatures["serving_default"]

  def predict(pairs):
    out = serving(
      text_a=tf.constant([a for a, _ in pairs]),
      text_b=tf.constant([b for _, b in pairs]),
    )
    return out["probabilities"].numpy(), out["label"].numpy()

  return predict


def _timed(fn, pairs):
  start = time.perf_counter()
  fn(pairs)
  return time.perf_counter() - start


def main(argv):
  del argv
  model, vocab_file, export_dir = _prepare()
  if FLAGS.prepare_only:
    return
  pairs = peer_table.mrpc_pairs(FLAGS.mrpc_dev)
  paths = {
    "SavedModel (in-graph tokenizer)": _saved_model_path(export_dir),
    "Python tokenizer + same model": _python_path(model, vocab_file),
  }
  (sm_probs, _), (py_probs, _) = [p(pairs[:_BATCH]) for p in paths.values()]
  max_diff = float(np.abs(sm_probs - py_probs).max())
  print("max |probability difference| on %d pairs: %.2e" % (_BATCH, max_diff))
  for fn in paths.values():  # warm-up: one of each batch size
    fn(pairs[:1])
    fn(pairs[:_BATCH])
  latency = {name: [] for name in paths}
  for i in range(FLAGS.requests):
    for name, fn in paths.items():
      latency[name].append(_timed(fn, [pairs[i % len(pairs)]]))
  batches = [pairs[i : i + _BATCH] for i in range(0, len(pairs), _BATCH)]
  seconds = {name: 0.0 for name in paths}
  for _ in range(FLAGS.rounds):
    for batch in batches:  # alternating too, so load spikes hit both
      for name, fn in paths.items():
        seconds[name] += _timed(fn, batch)
  results = {}
  for name in paths:
    ms = np.array(latency[name]) * 1000
    results[name] = {
      "p50_ms": float(np.percentile(ms, 50)),
      "p99_ms": float(np.percentile(ms, 99)),
      "batch32_pairs_per_s": FLAGS.rounds * len(pairs) / seconds[name],
    }
  print(
    "\nMiniLM-L6 (H=384) classifier, max_seq_length %d, %d CPU cores, "
    "%d single requests, %d x %d dev pairs at batch %d"
    % (
      FLAGS.max_seq_length,
      os.cpu_count(),
      FLAGS.requests,
      FLAGS.rounds,
      len(pairs),
      _BATCH,
    )
  )
  print("%-34s %9s %9s %16s" % ("path", "p50 ms", "p99 ms", "batch-32 pairs/s"))
  for name, r in results.items():
    print(
      "%-34s %9.2f %9.2f %16.1f"
      % (name, r["p50_ms"], r["p99_ms"], r["batch32_pairs_per_s"])
    )
  if FLAGS.output_json:
    with open(FLAGS.output_json, "w") as f:
      json.dump(
        {
          "results": results,
          "max_probability_diff": max_diff,
          "max_seq_length": FLAGS.max_seq_length,
          "requests": FLAGS.requests,
          "rounds": FLAGS.rounds,
          "dev_pairs": len(pairs),
        },
        f,
        indent=2,
      )


if __name__ == "__main__":
  define_flags()
  app.run(main)
