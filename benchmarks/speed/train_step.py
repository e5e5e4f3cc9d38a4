"""Training-step throughput of the engine next to this machine's matmul rate.

For BERT-Base (or the tiny config) on SQuAD-shaped batches: examples/s of
the `Trainer`'s own training loop (forward, span loss, backward, clipping,
AdamWeightDecay) per dtype and SEQxBATCH shape, the model GFLOP/s that
implies, and its share of a plain matmul's rate in the same dtype measured
right before it in the same round (see `step_timing.py`). Rounds are
interleaved; the table shows medians and the load average.

    python -m benchmarks.speed.train_step --dtype=float32,mixed_bfloat16 \
      --shapes=128x8,128x32,384x8 --rounds=3 --steps=1
    python -m benchmarks.speed.train_step --profile_dir=/tmp/prof --shapes=128x8
"""

import os
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from absl import app  # pylint: disable=g-import-not-at-top
from absl import flags
import keras
import tensorflow as tf

from benchmarks.speed import step_timing
from bert_tf.tasks.squad import SquadTask
from bert_tf.training import optimization
from bert_tf.training.trainer import Trainer

step_timing.define_flags(default_rounds=3)
flags.DEFINE_integer("steps", 1, "Timed steps per measurement.")
flags.DEFINE_string(
  "profile_dir",
  None,
  "Instead of the table: trace --steps steps of each "
  "dtype and shape with tf.profiler into this folder "
  "(TensorBoard / xprof), and print the top ops if the "
  "`xprof` package is installed.",
)
FLAGS = flags.FLAGS


def make_trainer(config, dtype, output_dir):
  """A Trainer built under `dtype` (the policy is captured by the layers)."""
  keras.mixed_precision.set_global_policy(dtype)
  try:
    return Trainer(
      SquadTask(config, 128),
      lambda: optimization.create_optimizer(1e-4, 10**6, 10),
      output_dir,
      iterations_per_loop=FLAGS.steps,
      save_checkpoints_steps=0,
      use_xla=FLAGS.use_xla,
      progress=False,
    )
  finally:
    keras.mixed_precision.set_global_policy("float32")


def step_timer(trainer, config, seq, batch):
  """fn() -> examples/s of `--steps` steps of the trainer's own loop.

  The loop is called directly: `Trainer.train` would write a checkpoint
  (1.3 GB for BERT-Base with its Adam slots) after every measurement.
  """
  features = step_timing.span_features(batch, seq, config.vocab_size)
  iterator = iter(
    trainer.strategy.distribute_datasets_from_function(
      lambda ctx: tf.data.Dataset.from_tensors(features).repeat()
    )
  )
  # pylint: disable=protected-access
  trainer._train_loop = trainer._train_loop or trainer._make_train_loop()
  steps = tf.constant(FLAGS.steps)

  def measure():
    start = time.perf_counter()
    loss, _ = trainer._train_loop(iterator, steps)
    float(loss)
    return FLAGS.steps * batch / (time.perf_counter() - start)

  measure()  # traces and warms up
  return measure


def main(argv):
  del argv
  step_timing.check_dtypes(FLAGS.dtype)
  config = step_timing.bert_config(FLAGS.config)
  shapes = step_timing.parse_shapes(FLAGS.shapes)
  with tempfile.TemporaryDirectory() as tmp:
    trainers = {
      d: make_trainer(config, d, os.path.join(tmp, d)) for d in FLAGS.dtype
    }
    cases = []
    for seq, batch in shapes:
      for dtype in FLAGS.dtype:
        timer = step_timer(trainers[dtype], config, seq, batch)
        cases.append(
          (
            dtype,
            "%dx%d" % (seq, batch),
            3 * step_timing.forward_flops(config, seq),
            timer,
          )
        )
    if FLAGS.profile_dir:
      step_timing.profile(cases, FLAGS.profile_dir)
      return
    print(
      "Training step, %s config, XLA %s, %d step(s) per measurement"
      % (FLAGS.config, "on" if FLAGS.use_xla else "off", FLAGS.steps)
    )
    results, loads = step_timing.run_rounds(
      cases, FLAGS.rounds, FLAGS.matmul_size
    )
    step_timing.print_table(cases, results, loads)


if __name__ == "__main__":
  app.run(main)
