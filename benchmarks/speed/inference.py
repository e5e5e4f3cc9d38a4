"""Inference throughput (forward pass, SQuAD span logits) next to this
machine's matmul rate in the same dtype.

For BERT-Base (or the tiny config): examples/s of `model(features,
training=False)` in a `tf.function` per dtype and SEQxBATCH shape, the model
GFLOP/s that implies and its share of the same round's matmul rate in that
dtype (`step_timing.py`). Rounds are interleaved; the table shows medians.

    python -m benchmarks.speed.inference --dtype=float32,mixed_bfloat16 \
      --shapes=128x8,128x32,384x8 --rounds=3
"""

import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from absl import app  # pylint: disable=g-import-not-at-top
from absl import flags
import keras
import tensorflow as tf

from benchmarks.speed import step_timing
from bert_tf.tasks.squad import SquadModel

step_timing.define_flags(default_rounds=5)
flags.DEFINE_integer("batches", 2, "Batches per measurement.")
flags.DEFINE_string(
  "profile_dir",
  None,
  "Instead of the table: trace one measurement of each "
  "dtype and shape into this folder and print the top "
  "ops.",
)
FLAGS = flags.FLAGS


def make_model(config, dtype):
  keras.mixed_precision.set_global_policy(dtype)
  try:
    return SquadModel(config)
  finally:
    keras.mixed_precision.set_global_policy("float32")


def forward_timer(model, config, seq, batch):
  """fn() -> examples/s of `--batches` forward passes."""
  features = step_timing.span_features(batch, seq, config.vocab_size)

  @tf.function(jit_compile=FLAGS.use_xla)
  def forward(features):
    outputs = model(features, training=False)
    return tf.reduce_sum(outputs["start_logits"])

  def measure():
    start = time.perf_counter()
    for _ in range(FLAGS.batches):
      float(forward(features))
    return FLAGS.batches * batch / (time.perf_counter() - start)

  measure()  # traces and warms up
  return measure


def main(argv):
  del argv
  step_timing.check_dtypes(FLAGS.dtype)
  config = step_timing.bert_config(FLAGS.config)
  models = {d: make_model(config, d) for d in FLAGS.dtype}
  cases = []
  for seq, batch in step_timing.parse_shapes(FLAGS.shapes):
    for dtype in FLAGS.dtype:
      cases.append(
        (
          dtype,
          "%dx%d" % (seq, batch),
          step_timing.forward_flops(config, seq),
          forward_timer(models[dtype], config, seq, batch),
        )
      )
  if FLAGS.profile_dir:
    step_timing.profile(cases, FLAGS.profile_dir)
    return
  print(
    "Inference, %s config, XLA %s, %d batch(es) per measurement"
    % (FLAGS.config, "on" if FLAGS.use_xla else "off", FLAGS.batches)
  )
  results, loads = step_timing.run_rounds(
    cases, FLAGS.rounds, FLAGS.matmul_size
  )
  step_timing.print_table(cases, results, loads)


if __name__ == "__main__":
  app.run(main)
