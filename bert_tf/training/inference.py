"""Batched inference for `Trainer.predict` / `Trainer.evaluate` on any
strategy, keeping the input order.

Every batch is padded to a fixed size (a multiple of the replica count), so
partial last batches work on every strategy, then the padding rows are
dropped again. Under a multi-worker strategy each worker predicts every row
on its own (no collectives).

Example:
    fns = {}
    for rows in real_rows(strategy, model, eval_dataset(...), 8,
                          lambda features, outputs: outputs, fns, "predict"):
      ...  # numpy arrays of the real rows of one batch
"""

import numpy as np
import tensorflow as tf

from bert_tf.io_utils import InputError
from bert_tf.training import batch_padding
from bert_tf.training import distribution
from bert_tf.training import input_pipeline


def real_rows(strategy, model, dataset, batch_size, fn, traced_fns, key):
  """Yields numpy dicts of `fn(features, outputs)` for the real rows.

  `traced_fns` keeps the traced step per `key` (the kind of call), so
  repeated evaluations trace it once.
  """
  replicas = strategy.num_replicas_in_sync
  size = -(-batch_size // replicas) * replicas
  padded = input_pipeline.without_autotune(
    dataset.map(lambda f: batch_padding.pad_batch(f, size))
  )
  # Workers predict independently: no collectives, each sees all rows.
  local = distribution.num_workers(strategy) > 1 or replicas == 1
  run = traced_fns.get(key)
  if run is None:

    def step(features):
      features = dict(features)
      valid = features.pop(batch_padding.VALID)
      result = fn(features, model(features, training=False))
      result[batch_padding.VALID] = valid
      return result

    run = tf.function(
      step if local else lambda f: strategy.run(step, args=(f,))
    )
    traced_fns[key] = run
  if local:
    batches = (run(features) for features in padded)
  else:
    options = tf.data.Options()
    options.experimental_distribute.auto_shard_policy = (
      tf.data.experimental.AutoShardPolicy.OFF
    )
    dist = strategy.experimental_distribute_dataset(
      padded.with_options(options)
    )
    batches = (batch_padding.concat_replicas(strategy, run(f)) for f in dist)
  try:
    for result in batches:
      result = {k: np.asarray(v) for k, v in result.items()}
      valid = result.pop(batch_padding.VALID)
      yield {k: v[valid] for k, v in result.items()}
  except tf.errors.DataLossError as e:
    raise InputError(
      input_pipeline.damaged_input(getattr(dataset, "input_files", ()), e)
    ) from e
