"""--num_frozen_layers (wiring.freeze_lowest_layers): the embeddings
and the lowest N layers stay bit-identical through training, the rest
changes; any task with an encoder (here the classifier)."""

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.io_utils import InputError
from bert_tf.jobs import wiring
from bert_tf.modeling.bert_config import BertConfig
from bert_tf.tasks.classification import ClassificationTask
from bert_tf.training import optimization
from bert_tf.training.trainer import Trainer

pytestmark = pytest.mark.process  # trains or exports end to end in this process

CONFIG = BertConfig(
  vocab_size=50,
  hidden_size=16,
  num_hidden_layers=2,
  num_attention_heads=4,
  intermediate_size=32,
  max_position_embeddings=16,
)


def _trainer(tmp_path, num_layers):
  task = ClassificationTask(CONFIG, 2, 8)
  wiring.freeze_lowest_layers(task, num_layers)
  return Trainer(
    task,
    lambda: optimization.create_optimizer(1e-2, 4, 0),
    str(tmp_path),
    progress=False,
    save_checkpoints_steps=0,
  )


def test_frozen_layers_do_not_change(tmp_path):
  trainer = _trainer(tmp_path, 1)
  names = trainer.model.tf1_variables()
  before = {name: v.numpy() for name, v in names.items()}
  rng = np.random.RandomState(0)
  features = {
    "input_ids": rng.randint(1, 50, (4, 8)).astype(np.int32),
    "input_mask": np.ones((4, 8), np.int32),
    "segment_ids": np.zeros((4, 8), np.int32),
    "label_ids": np.array([0, 1, 1, 0], np.int32),
  }
  trainer.train(lambda ctx: tf.data.Dataset.from_tensors(features).repeat(), 4)
  frozen = {
    n
    for n in names
    if n.startswith(("bert/embeddings/", "bert/encoder/layer_0/"))
  }
  assert len(frozen) == 3 + 2 + 16  # tables, LayerNorm, one block
  for name, variable in names.items():
    same = np.array_equal(variable.numpy(), before[name])
    assert same == (name in frozen), name
  trainable = {id(v) for v in trainer.model.trainable_variables}
  assert not trainable & {id(names[n]) for n in frozen}


def test_too_many_frozen_layers_is_a_flag_error(tmp_path):
  with pytest.raises(InputError) as error:
    _trainer(tmp_path, 3)
  assert str(error.value) == (
    "--num_frozen_layers=3: must be between 0 and the model's 2 layers"
  )
