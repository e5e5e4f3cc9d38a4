"""Training under --dtype=mixed_bfloat16 keeps the original's float32 state:
master weights, Adam slots and the checkpoint."""

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.tasks.squad import SquadTask
from bert_tf.training import distribution
from bert_tf.training import optimization
from bert_tf.training.trainer import Trainer
from tests.helpers.checkpoints import config_of

pytestmark = pytest.mark.process  # trains or exports end to end in this process

_SEQ = 16


def _dataset_fn(ctx):
  del ctx
  features = {
    "input_ids": tf.random.stateless_uniform(
      [4, _SEQ], (1, 2), 0, 99, tf.int32
    ),
    "input_mask": tf.ones([4, _SEQ], tf.int32),
    "segment_ids": tf.zeros([4, _SEQ], tf.int32),
    "start_positions": tf.constant([1, 2, 3, 4]),
    "end_positions": tf.constant([2, 3, 4, 5]),
  }
  return tf.data.Dataset.from_tensors(features).repeat()


def test_bfloat16_training_keeps_float32_state(tmp_path):
  with distribution.policy_scope("mixed_bfloat16"):
    trainer = Trainer(
      SquadTask(config_of("ckpt_a"), _SEQ),
      lambda: optimization.create_optimizer(1e-3, 10, 1),
      str(tmp_path),
      save_checkpoints_steps=0,
      progress=False,
    )
    history = trainer.train(_dataset_fn, 3)
  model = trainer.model
  assert model.encoder.blocks[0].attention.query.compute_dtype == "bfloat16"
  assert np.isfinite(history[-1]["loss"])
  reader = tf.train.load_checkpoint(str(tmp_path))
  dtypes = reader.get_variable_to_dtype_map()
  floating = {k: v for k, v in dtypes.items() if v.is_floating}
  # Model weights and both Adam slots of each, all float32.
  assert len(floating) >= 3 * len(model.trainable_variables)
  assert set(floating.values()) == {tf.float32}
  assert {
    v.dtype for v in trainer.optimizer.variables if v.dtype != "int64"
  } == {"float32"}
