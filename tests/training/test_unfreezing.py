"""--unfreeze_schedule: phases by global step, fresh optimizer slots for newly
unfrozen weights, the right phase after a resume, counts logged."""

import logging

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf.io_utils import InputError
from bert_tf.modeling.bert_config import BertConfig
from bert_tf.modeling.bert_encoder import BertEncoder
from bert_tf.tasks.base import Task
from bert_tf.training import optimization
from bert_tf.training.trainer import Trainer
from bert_tf.training.unfreezing import UnfreezeSchedule

pytestmark = pytest.mark.process  # trains or exports end to end in this process

CONFIG = BertConfig(
  50,
  hidden_size=8,
  num_hidden_layers=2,
  num_attention_heads=2,
  intermediate_size=16,
  max_position_embeddings=16,
  hidden_dropout_prob=0.0,
  attention_probs_dropout_prob=0.0,
)
SCHEDULE = "0:2,2:1,4:0"  # 2 steps all frozen, 2 with layer_1, then all


class EncoderModel(keras.Model):
  def __init__(self):
    super().__init__(name="classifier")
    self.encoder = BertEncoder(CONFIG)
    self.head = keras.layers.Dense(2)
    self.head.build((None, CONFIG.hidden_size))

  def call(self, features, training=False):
    pooled = self.encoder(features, training=training)["pooled_output"]
    return {"logits": self.head(pooled)}


class EncoderTask(Task):
  def build_model(self):
    keras.utils.set_random_seed(3)
    return EncoderModel()

  def loss(self, features, outputs):
    return tf.reduce_mean(
      keras.losses.sparse_categorical_crossentropy(
        features["label"], outputs["logits"], from_logits=True
      )
    )


def _dataset_fn(ctx):
  rng = np.random.RandomState(0)
  ids = rng.randint(1, 50, size=(32, 6)).astype(np.int32)
  data = {
    "input_ids": ids,
    "input_mask": np.ones_like(ids),
    "segment_ids": np.zeros_like(ids),
    "label": ids[:, 0] % 2,
  }
  return (
    tf.data.Dataset.from_tensor_slices(data)
    .repeat()
    .batch(ctx.get_per_replica_batch_size(8), drop_remainder=True)
  )


def _trainer(output_dir, schedule=SCHEDULE):
  return Trainer(
    EncoderTask(),
    lambda: optimization.create_optimizer(0.01, 6, 0),
    output_dir,
    progress=False,
    iterations_per_loop=1,
    save_checkpoints_steps=1,
    unfreeze_schedule=UnfreezeSchedule.parse(schedule),
  )


def _groups(model):
  """Weights of the embeddings, layer_0, layer_1 (copies)."""
  encoder = model.encoder
  return [
    [v.numpy() for v in part.weights]
    for part in (encoder.embeddings, encoder.blocks[0], encoder.blocks[1])
  ]


def _changed(before, after):
  return [
    any(not np.array_equal(a, b) for a, b in zip(x, y))
    for x, y in zip(before, after)
  ]


def test_each_phase_trains_only_its_layers(tmp_path, caplog):
  trainer = _trainer(tmp_path)
  start = _groups(trainer.model)
  with caplog.at_level(logging.INFO, logger="absl"):
    trainer.train(_dataset_fn, 2)
    phase_1 = _groups(trainer.model)
    trainer.train(_dataset_fn, 4)
    phase_2 = _groups(trainer.model)
    trainer.train(_dataset_fn, 6)
  assert _changed(start, phase_1) == [False, False, False]
  assert _changed(phase_1, phase_2) == [False, False, True]
  assert _changed(phase_2, _groups(trainer.model)) == [True, True, True]
  # 16 variables per layer, 5 embeddings, 2 pooler, 2 head.
  for step, frozen, trainable, fresh in (
    (0, 2, 4, 0),
    (2, 1, 20, 16),
    (4, 0, 41, 21),
  ):
    assert (
      "unfreeze phase from step %d: lowest %d layers frozen, %d "
      "trainable variables" % (step, frozen, trainable)
    ) in caplog.text
    assert "%d of them newly unfrozen" % fresh in caplog.text


# pylint: disable=protected-access
def test_newly_unfrozen_weights_start_with_fresh_slots(tmp_path):
  # Layer 1 trains in phase 2, is frozen again in phase 3, unfrozen in 4.
  trainer = _trainer(tmp_path, "0:2,2:1,4:2,5:1")
  trainer.train(_dataset_fn, 4)
  optimizer = trainer.optimizer
  query = trainer.model.encoder.blocks[1].attention.query.kernel
  index = optimizer._get_variable_index(query)
  assert np.abs(optimizer._m[index].numpy()).sum() > 0
  before = query.numpy()
  trainer.train(_dataset_fn, 5)  # frozen: no update, slots kept
  np.testing.assert_array_equal(query.numpy(), before)
  assert np.abs(optimizer._m[index].numpy()).sum() > 0
  trainer.train(_dataset_fn, 6)
  # Unfrozen at step 5: slots zeroed, then one update. Adam without bias
  # correction from zero moments: m = 0.1 g, v = 0.001 g^2.
  m = optimizer._m[index].numpy()
  v = optimizer._v[index].numpy()
  np.testing.assert_allclose(v, 0.001 * (m / 0.1) ** 2, rtol=1e-4, atol=1e-12)


def test_resume_lands_in_the_checkpoints_phase(tmp_path, caplog):
  full = _trainer(tmp_path / "full")
  full.train(_dataset_fn, 6)
  first = _trainer(tmp_path / "resumed")
  first.train(_dataset_fn, 3)  # "killed" after the checkpoint at step 3
  with caplog.at_level(logging.INFO, logger="absl"):
    rest = _trainer(tmp_path / "resumed")
    rest.train(_dataset_fn, 6)
  assert "unfreeze phase from step 3: lowest 1 layers frozen" in caplog.text
  assert "unfreeze phase from step 0" not in caplog.text
  for a, b in zip(full.model.weights, rest.model.weights):
    np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-6, err_msg=a.path)


@pytest.mark.parametrize(
  "text, message",
  [
    ("0:2,x", "'x' is not STEP:FROZEN_LAYERS"),
    ("10:2,20:0", "the first phase must start at step 0"),
    ("0:2,5:1,5:0", "phase steps must increase"),
  ],
)
def test_bad_schedules_are_refused(text, message):
  with pytest.raises(InputError, match=message):
    UnfreezeSchedule.parse(text)


def test_more_frozen_layers_than_the_model_has_is_refused():
  with pytest.raises(
    InputError, match="3 frozen layers from step 0, but the model has 2"
  ):
    UnfreezeSchedule.parse("0:3,10:0").check_layers(2)


def test_an_encoder_frozen_as_a_whole_stays_frozen():
  # Feature-based NER freezes the whole encoder; a schedule (or
  # --num_frozen_layers=0) must not unfreeze its layers.
  encoder = BertEncoder(CONFIG)
  encoder.trainable = False
  for layers in (0, 1):
    encoder.freeze_lowest_layers(layers)
    assert not any(v.trainable for v in encoder.weights)
  encoder.trainable = True
  encoder.freeze_lowest_layers(1)
  assert len(encoder.trainable_variables) == 16 + 2  # layer_1 + pooler
