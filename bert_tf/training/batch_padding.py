"""Batch reshaping helpers for the `Trainer`.

`pad_batch` pads a (possibly partial) batch to a fixed size and marks the
real rows, so evaluation and prediction keep static shapes on every
strategy; `split_batch`/`take` cut a batch into gradient-accumulation
micro-batches; `concat_replicas` joins per-replica outputs in replica order.

Example:
    padded = dataset.map(lambda f: pad_batch(f, 8))  # adds VALID
"""

import tensorflow as tf

VALID = "__valid__"


def pad_batch(features, size):
  """Zero-pads every feature along axis 0 to `size`; adds a VALID mask."""
  count = tf.shape(tf.nest.flatten(features)[0])[0]

  def pad(tensor):
    paddings = [[0, size - count]] + [[0, 0]] * (tensor.shape.rank - 1)
    padded = tf.pad(tensor, paddings)
    padded.set_shape([size] + tensor.shape[1:].as_list())
    return padded

  padded = {k: pad(v) for k, v in features.items()}
  padded[VALID] = pad(tf.ones([count], tf.bool))
  return padded


def split_batch(features, num_micro_batches):
  """[B, ...] -> [num_micro_batches, B / num_micro_batches, ...]."""

  def split(tensor):
    shape = tf.concat([[num_micro_batches, -1], tf.shape(tensor)[1:]], 0)
    return tf.reshape(tensor, shape)

  return tf.nest.map_structure(split, features)


def take(micro_batches, index):
  """Micro-batch `index` of `split_batch` output."""
  return tf.nest.map_structure(lambda t: t[index], micro_batches)


def concat_replicas(strategy, per_replica):
  """Concatenates each output's local replica values along axis 0."""
  return tf.nest.map_structure(
    lambda v: tf.concat(strategy.experimental_local_results(v), 0), per_replica
  )
