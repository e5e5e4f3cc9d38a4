"""Picks the `tf.distribute` strategy and the runtime settings from flags.

* `--use_tpu` -> `TPUStrategy` (resolved from `--tpu_name`/`--master`,
  `--tpu_zone`, `--gcp_project`, like the original's cluster resolver);
* `TF_CONFIG` naming more than one task -> `MultiWorkerMirroredStrategy`;
* more than one GPU (`--num_gpus`, or all visible when unset) ->
  `MirroredStrategy`;
* otherwise the default strategy (CPU or one GPU).

Example:
    configure_runtime(seed=1, deterministic=True, dtype="float32")
    strategy = get_strategy(num_gpus=None)
"""

import contextlib
import json
import os

from absl import logging
import keras
import tensorflow as tf

from bert_tf.io_utils import InputError
from bert_tf.training.choices import DTYPES


def _tf_config_tasks():
  raw = os.environ.get("TF_CONFIG")
  if not raw:
    return 0
  try:
    cluster = json.loads(raw).get("cluster", {})
  except ValueError:
    raise InputError("TF_CONFIG is not valid JSON: %r" % raw[:80]) from None
  return sum(len(v) for k, v in cluster.items() if k != "evaluator")


def get_strategy(
  use_tpu=False,
  tpu_name=None,
  tpu_zone=None,
  gcp_project=None,
  master=None,
  num_gpus=None,
):
  """Returns the strategy the flags ask for (see the module docstring)."""
  if use_tpu:
    resolver = tf.distribute.cluster_resolver.TPUClusterResolver(
      tpu=tpu_name or master or "", zone=tpu_zone, project=gcp_project
    )
    tf.config.experimental_connect_to_cluster(resolver)
    tf.tpu.experimental.initialize_tpu_system(resolver)
    strategy = tf.distribute.TPUStrategy(resolver)
  elif _tf_config_tasks() > 1:
    strategy = tf.distribute.MultiWorkerMirroredStrategy()
  else:
    gpus = tf.config.list_physical_devices("GPU")
    count = len(gpus) if num_gpus is None else num_gpus
    if count > len(gpus):
      raise InputError(
        "--num_gpus=%d but only %d GPU(s) are visible" % (count, len(gpus))
      )
    if count > 1:
      strategy = tf.distribute.MirroredStrategy(
        ["/gpu:%d" % i for i in range(count)]
      )
    else:
      strategy = tf.distribute.get_strategy()
  logging.info(
    "Strategy %s with %d replica(s)",
    type(strategy).__name__,
    strategy.num_replicas_in_sync,
  )
  return strategy


def _cluster(strategy):
  if not isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy):
    return None, None, {}
  resolver = strategy.cluster_resolver
  return resolver.task_type, resolver.task_id, resolver.cluster_spec().as_dict()


def num_workers(strategy):
  """Worker processes training together (1 unless multi-worker)."""
  cluster = _cluster(strategy)[2]
  return max(1, len(cluster.get("chief", [])) + len(cluster.get("worker", [])))


def is_chief(strategy):
  """True on the process that owns output_dir (checkpoints, summaries)."""
  task_type, task_id, cluster = _cluster(strategy)
  if num_workers(strategy) == 1 or task_type == "chief":
    return True
  return task_type == "worker" and task_id == 0 and "chief" not in cluster


def configure_runtime(seed=None, deterministic=False, dtype="float32"):
  """Sets seeds, op determinism and the Keras mixed-precision policy.

  Call before building models. `deterministic` without a seed uses seed 0.
  """
  if dtype not in DTYPES:
    raise InputError(
      "--dtype must be one of %s, got %r" % ("|".join(DTYPES), dtype)
    )
  if deterministic and seed is None:
    seed = 0
  if seed is not None:
    keras.utils.set_random_seed(seed)
  if deterministic:
    tf.config.experimental.enable_op_determinism()
  keras.mixed_precision.set_global_policy(dtype)


@contextlib.contextmanager
def policy_scope(dtype):
  """Layers built inside compute in `dtype` (a Keras policy name, e.g.
  "mixed_bfloat16"); the global policy is restored on exit."""
  previous = keras.mixed_precision.global_policy()
  keras.mixed_precision.set_global_policy(dtype)
  try:
    yield
  finally:
    keras.mixed_precision.set_global_policy(previous)
