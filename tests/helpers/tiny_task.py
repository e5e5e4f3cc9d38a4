"""A tiny task model for the engine tests, and a subprocess entry point.

`python -m tests.helpers.tiny_task mirrored OUT.npz` splits the CPU into
two logical devices (must happen before TF initialises, hence a fresh
process) and trains the same model single-device and mirrored;
`... worker OUT.npz` trains under MultiWorkerMirroredStrategy from TF_CONFIG.
"""

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # pylint: disable=g-import-not-at-top
import numpy as np  # pylint: disable=g-import-not-at-top
import tensorflow as tf  # pylint: disable=g-import-not-at-top

from bert_tf import optimization  # pylint: disable=g-import-not-at-top
from bert_tf.tasks.base import Task  # pylint: disable=g-import-not-at-top
from bert_tf.training.trainer import Trainer  # pylint: disable=g-import-not-at-top

NUM_EXAMPLES = 64
NUM_STEPS = 6


class TinyModel(keras.Model):
  """Dense -> LayerNorm -> Dropout -> Dense over features["x"]."""

  def __init__(self, dropout=0.0):
    super().__init__(name="tiny")
    self.hidden = keras.layers.Dense(8, activation="tanh", name="dense")
    self.norm = keras.layers.LayerNormalization(epsilon=1e-12, name="LayerNorm")
    self.drop = keras.layers.Dropout(dropout, seed=3)
    self.classifier = keras.layers.Dense(3, name="output")

  def call(self, features, training=False):
    hidden = self.drop(self.norm(self.hidden(features["x"])), training=training)
    return {"logits": self.classifier(hidden)}


def loss_fn(features, outputs):
  return tf.reduce_mean(
    keras.losses.sparse_categorical_crossentropy(
      features["y"], outputs["logits"], from_logits=True
    )
  )


def metric_fn(features, outputs):
  correct = tf.cast(
    tf.equal(tf.argmax(outputs["logits"], -1, tf.int32), features["y"]),
    tf.float32,
  )
  return {"accuracy": (correct, tf.ones_like(correct))}


class TinyTask(Task):
  """A 3-class softmax regression with fixed initial weights."""

  def __init__(self, dropout=0.0):
    self.dropout = dropout

  def build_model(self):
    model = TinyModel(self.dropout)
    model({"x": tf.zeros([1, 4])})
    rng = np.random.RandomState(7)
    for v in model.weights:
      if v.trainable:
        v.assign(rng.normal(size=v.shape).astype(np.float32) * 0.5)
    return model

  def loss(self, features, outputs):
    return loss_fn(features, outputs)

  def metrics(self, features, outputs):
    return metric_fn(features, outputs)


def examples():
  rng = np.random.RandomState(0)
  return {
    "x": rng.normal(size=(NUM_EXAMPLES, 4)).astype(np.float32),
    "y": rng.randint(0, 3, size=NUM_EXAMPLES).astype(np.int32),
  }


def dataset_fn(global_batch, shuffle=False):
  """Replica r of pipeline p gets rows of the same global batch as 1 device."""

  def fn(ctx):
    per_replica = ctx.get_per_replica_batch_size(global_batch)
    ds = tf.data.Dataset.from_tensor_slices(examples()).repeat()
    if shuffle:
      ds = ds.shuffle(16)
    ds = ds.batch(per_replica, drop_remainder=True)
    return ds.shard(ctx.num_input_pipelines, ctx.input_pipeline_id)

  return fn


def optimizer_fn():
  return optimization.create_optimizer(0.05, NUM_STEPS, 2)


def train(
  output_dir,
  strategy=None,
  global_batch=8,
  steps=NUM_STEPS,
  dropout=0.0,
  shuffle=False,
  **kwargs,
):
  """Trains a fresh tiny model; returns (losses per step, weights)."""
  kwargs.setdefault("iterations_per_loop", 1)
  trainer = Trainer(
    TinyTask(dropout),
    optimizer_fn,
    output_dir,
    strategy,
    progress=False,
    **kwargs,
  )
  history = trainer.train(dataset_fn(global_batch, shuffle), steps)
  weights = [v.numpy() for v in trainer.model.trainable_variables]
  return [h["loss"] for h in history], weights, trainer


def _save(path, losses, weights, **more):
  np.savez(
    path,
    losses=np.array(losses),
    **{"w%d" % i: w for i, w in enumerate(weights)},
    **more,
  )


def main(mode, out):
  if mode == "mirrored":
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(
      cpu, [tf.config.LogicalDeviceConfiguration()] * 2
    )
    base = os.path.dirname(out)
    single, single_w, _ = train(os.path.join(base, "single"))
    mirrored = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    losses, weights, trainer = train(os.path.join(base, "mirrored"), mirrored)
    # Resume under 2 replicas (input position restored by skipping batches).
    train(os.path.join(base, "resumed"), mirrored, steps=NUM_STEPS // 2)
    _, resumed_w, _ = train(os.path.join(base, "resumed"), mirrored)
    # Dropout, accumulation, XLA and partial-batch prediction, 2 replicas.
    accum, _, _ = train(
      os.path.join(base, "accum"),
      mirrored,
      dropout=0.1,
      gradient_accumulation_steps=2,
      use_xla=True,
    )
    rows = {k: v[:13] for k, v in examples().items()}
    ds = tf.data.Dataset.from_tensor_slices(rows).batch(5)
    logits = np.stack([r["logits"] for r in trainer.predict(ds, 5)])
    logits -= trainer.model(rows)["logits"].numpy()  # Expect 0: same order.
    _save(
      out,
      losses,
      weights,
      single=np.array(single),
      logits=logits,
      resumed=np.concatenate([w.ravel() for w in resumed_w]),
      accum=np.array(accum),
      **{"s%d" % i: w for i, w in enumerate(single_w)},
    )
  else:
    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    task = strategy.cluster_resolver.task_id
    losses, weights, _ = train(
      os.path.join(os.path.dirname(out), "mw"),
      strategy,
      save_checkpoints_steps=2,
    )
    if task == 0:
      _save(out, losses, weights)


if __name__ == "__main__":
  main(sys.argv[1], sys.argv[2])
