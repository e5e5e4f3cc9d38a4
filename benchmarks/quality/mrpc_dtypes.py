r"""MRPC dev accuracy and serving speed of one fine-tuned run in float32,
bfloat16 and int8 (not CI).

Builds the classifier SavedModel's graph (`ClassifierExporter.serve`: raw
pairs in, probabilities out) for each dtype from the same checkpoint:
float32, bfloat16 (as `export_saved_model --dtype=bfloat16`: weights stored
in bfloat16) and int8 (the float32 model after Keras 3's
`model.quantize("int8")`, which quantizes every Dense kernel per output
channel and each input per call).
Scores the 408 MRPC dev pairs (accuracy, F1 of class 1) and times batch-32
passes over them, dtypes interleaved round by round; prints the CPU line.

    python benchmarks/quality/glue_minilm.py --tasks=mrpc --seed=1 \
      --work_dir=/tmp/g1
    python -m benchmarks.quality.mrpc_dtypes --run_dir=/tmp/g1/mrpc \
      --model_dir=/tmp/g1/minilm_ckpt
"""

import os
import statistics
import time
import warnings

from absl import app
from absl import flags
import keras
from sklearn.metrics import accuracy_score
from sklearn.metrics import f1_score
import tensorflow as tf

from benchmarks.speed import peer_table
from bert_tf.export.classifier import ClassifierExporter
from bert_tf.modeling.bert_config import BertConfig
from bert_tf.training import distribution
from data_prep.classifier.tasks import get_processor

FLAGS = flags.FLAGS
_SHARED = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared")
_POLICIES = {"float32": "float32", "bfloat16": "mixed_bfloat16", "int8": None}


def define_flags():
  flags.DEFINE_string("run_dir", None, "A fine-tuned MRPC run (output_dir).")
  flags.DEFINE_string(
    "model_dir", None, "Folder with the run's vocab.txt and bert_config.json."
  )
  flags.DEFINE_string(
    "data_dir",
    os.path.join(_SHARED, "data", "glue", "MRPC"),
    "GLUE MRPC folder (dev.tsv).",
  )
  flags.DEFINE_list("dtypes", list(_POLICIES), "float32, bfloat16, int8.")
  flags.DEFINE_integer("batch_size", 32, "Pairs per call.")
  flags.DEFINE_integer("rounds", 3, "Timed passes over dev per dtype.")
  flags.mark_flags_as_required(["run_dir", "model_dir"])


def build(dtype):
  """The serving function of `dtype`, restored from --run_dir."""
  config = BertConfig.from_json_file(
    os.path.join(FLAGS.model_dir, "bert_config.json")
  )
  with distribution.policy_scope(_POLICIES[dtype] or "float32"):
    exporter = ClassifierExporter(
      config,
      os.path.join(FLAGS.model_dir, "vocab.txt"),
      True,
      128,
      {"task_name": "mrpc"},
    )
  exporter.restore(FLAGS.run_dir)
  exporter.model = exporter.serving_copy()  # bfloat16: the SavedModel's
  if dtype == "int8":
    with warnings.catch_warnings():  # LayerNorm, Dropout: nothing to do
      warnings.simplefilter("ignore", UserWarning)
      exporter.model.quantize("int8")
  spec = tf.TensorSpec([None], tf.string)
  return tf.function(
    lambda a, b: exporter.serve(text_a=a, text_b=b)["probabilities"],
    input_signature=[spec, spec],
  )


def passes(serve, pairs):
  """Probabilities of every pair, and the pass's pairs/s."""
  start, outputs = time.perf_counter(), []
  for i in range(0, len(pairs), FLAGS.batch_size):
    chunk = pairs[i : i + FLAGS.batch_size]
    outputs.append(serve([p[0] for p in chunk], [p[1] for p in chunk]))
  seconds = time.perf_counter() - start
  return tf.concat(outputs, 0).numpy(), len(pairs) / seconds


def main(argv):
  del argv
  examples = get_processor("mrpc", FLAGS.data_dir).get_examples("dev")
  pairs = [(e.text_a, e.text_b) for e in examples]
  labels = [int(e.label) for e in examples]
  serves = {d: build(d) for d in FLAGS.dtypes}
  probabilities, speed = {}, {d: [] for d in FLAGS.dtypes}
  for d, serve in serves.items():  # traces and warms up
    probabilities[d] = passes(serve, pairs)[0]
  for r in range(FLAGS.rounds):
    for d in peer_table.rotated(list(FLAGS.dtypes), r):
      speed[d].append(passes(serves[d], pairs)[1])
  print(peer_table.cpu_line())
  print(
    "| dtype | dev accuracy | dev F1 | max \\|Δp\\| vs float32 | "
    "batch-%d pairs/s | ÷ bfloat16 |" % FLAGS.batch_size
  )
  print("|---|---|---|---|---|---|")
  base = probabilities.get("float32")
  for d in FLAGS.dtypes:
    predicted = probabilities[d].argmax(-1)
    delta = (
      "%.1e" % abs(probabilities[d] - base).max() if base is not None else "–"
    )
    versus = (
      "%.2f"
      % (statistics.median(speed[d]) / statistics.median(speed["bfloat16"]))
      if "bfloat16" in speed
      else "–"
    )
    print(
      "| %s | %.4f | %.4f | %s | %s | %s |"
      % (
        d,
        accuracy_score(labels, predicted),
        f1_score(labels, predicted),
        delta,
        peer_table.spread(speed[d], "%.1f"),
        versus,
      )
    )


if __name__ == "__main__":
  define_flags()
  keras.config.disable_interactive_logging()
  app.run(main)
