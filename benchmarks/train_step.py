"""Training-step throughput of the engine on this machine (SQuAD-style step).

For a BERT-Base-shaped and a tiny config at seq 128, float32, with and
without XLA: examples/s of a full `Trainer` step (forward, span loss,
backward, clipping, AdamWeightDecay), the implied model FLOP/s, and that as
a share of a plain float32 matmul's FLOP/s measured in the same run.

    python -m benchmarks.train_step [--configs=tiny,base] [--batch_size=8]

FLOPs per example = 3 x forward matmul FLOPs (backward ~ 2 x forward):
forward per layer = 2*S*(4H^2 + 2HI) + 4*S^2*H (QK^T and PV), plus the
pooler-free span head; embeddings lookups are not counted.
"""

import os
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from absl import app  # pylint: disable=g-import-not-at-top
from absl import flags  # pylint: disable=g-import-not-at-top
import keras  # pylint: disable=g-import-not-at-top
import tensorflow as tf  # pylint: disable=g-import-not-at-top

from bert_tf import optimization  # pylint: disable=g-import-not-at-top
from bert_tf.modeling.bert_config import BertConfig  # pylint: disable=g-import-not-at-top
from bert_tf.modeling.bert_encoder import BertEncoder  # pylint: disable=g-import-not-at-top
from bert_tf.modeling.heads.squad_head import SquadHead  # pylint: disable=g-import-not-at-top
from bert_tf.tasks.base import Task  # pylint: disable=g-import-not-at-top
from bert_tf.training.trainer import Trainer  # pylint: disable=g-import-not-at-top

flags.DEFINE_list("configs", ["tiny", "base"], "Configs to time.")
flags.DEFINE_integer("batch_size", 8, "Global batch size.")
flags.DEFINE_integer("seq_length", 128, "Sequence length.")
flags.DEFINE_integer("steps", 3, "Timed steps per measurement (after 1 "
                     "warm-up step).")
FLAGS = flags.FLAGS

CONFIGS = {
    "tiny": dict(hidden_size=128, num_hidden_layers=2, num_attention_heads=2,
                 intermediate_size=512),
    "base": dict(hidden_size=768, num_hidden_layers=12,
                 num_attention_heads=12, intermediate_size=3072),
}


class SpanModel(keras.Model):
  """BertEncoder + SquadHead, features in, start/end logits out."""

  def __init__(self, config):
    super().__init__(name="span_model")
    self.encoder = BertEncoder(config)
    self.head = SquadHead(config)

  def call(self, features, training=False):
    outputs = self.encoder(features, training=training)
    start, end = self.head(outputs["sequence_output"])
    return {"start_logits": start, "end_logits": end}


def span_loss(features, outputs):
  """The original loss: mean of start and end one-hot cross entropies."""
  def one(logits, positions):
    return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
        positions, tf.cast(logits, tf.float32)))
  return (one(outputs["start_logits"], features["start_positions"]) +
          one(outputs["end_logits"], features["end_positions"])) / 2.0


def forward_flops(config, seq):
  h, i = config.hidden_size, config.intermediate_size
  per_layer = 2 * seq * (4 * h * h + 2 * h * i) + 4 * seq * seq * h
  return config.num_hidden_layers * per_layer + 2 * seq * h * 2


def matmul_flops_per_sec(n=1024, repeats=20):
  a = tf.random.normal([n, n])
  b = tf.random.normal([n, n])
  run = tf.function(lambda x, y: tf.reduce_sum(tf.matmul(x, y)))
  run(a, b).numpy()
  start = time.perf_counter()
  for _ in range(repeats):
    run(a, b).numpy()
  return 2 * n ** 3 * repeats / (time.perf_counter() - start)


def dataset_fn(batch, seq, vocab):
  def fn(ctx):
    del ctx
    features = {
        "input_ids": tf.random.uniform([batch, seq], 0, vocab, tf.int32,
                                       seed=1),
        "input_mask": tf.ones([batch, seq], tf.int32),
        "segment_ids": tf.zeros([batch, seq], tf.int32),
        "start_positions": tf.fill([batch], 5),
        "end_positions": tf.fill([batch], 9),
    }
    return tf.data.Dataset.from_tensors(features).repeat()
  return fn


def time_step(config, use_xla):
  """Examples/s of the timed loop (one warm-up step traces and compiles)."""
  class SpanTask(Task):

    def build_model(self):
      model = SpanModel(config)
      model({"input_ids": tf.zeros([1, 8], tf.int32)})
      return model

    def loss(self, features, outputs):
      return span_loss(features, outputs)

  steps = FLAGS.steps
  with tempfile.TemporaryDirectory() as output_dir:
    trainer = Trainer(
        SpanTask(), lambda: optimization.create_optimizer(1e-4, 100, 10),
        output_dir, iterations_per_loop=steps, save_checkpoints_steps=0,
        use_xla=use_xla, progress=False)
    data = dataset_fn(FLAGS.batch_size, FLAGS.seq_length, config.vocab_size)
    trainer.train(data, 1)
    history = trainer.train(data, 1 + steps)
  return history[-1]["examples_per_sec"]


def main(argv):
  del argv
  print("| config | XLA | examples/s | model GFLOP/s | share of matmul |")
  print("|---|---|---|---|---|")
  # The CPU may be shared: the matmul rate is the best of several runs taken
  # around the measurements, i.e. what this machine can do when free.
  peak = max(matmul_flops_per_sec() for _ in range(3))
  for name in FLAGS.configs:
    config = BertConfig.from_dict(dict(vocab_size=30522, **CONFIGS[name]))
    flops = 3 * forward_flops(config, FLAGS.seq_length)
    for use_xla in (False, True):
      rate = time_step(config, use_xla)
      peak = max(peak, matmul_flops_per_sec())
      print("| %s | %s | %.2f | %.1f | %.0f%% (matmul best so far %.1f "
            "GFLOP/s) |" % (name, "on" if use_xla else "off", rate,
                            rate * flops / 1e9, 100 * rate * flops / peak,
                            peak / 1e9), flush=True)


if __name__ == "__main__":
  app.run(main)
