"""NerModel / NerHead: logits and the weighted token loss
by hand, the head in the registry, the feature modes' layer combinations,
and a frozen encoder staying bit-identical while the BiLSTM trains."""

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.io_utils import InputError
from bert_tf.modeling.bert_config import BertConfig
from bert_tf.modeling.heads import heads_for_variables
from bert_tf.modeling.heads.ner_head import NerHead
from bert_tf.tasks.ner import check_feature_mode
from bert_tf.tasks.ner import FEATURE_MODES
from bert_tf.tasks.ner import NerModel
from bert_tf.tasks.ner import NerTask
from bert_tf.tasks.ner import tagging_loss
from bert_tf.training import optimization
from bert_tf.training.trainer import Trainer

NUM_LABELS = 5


def _config(layers=4):
  return BertConfig(
    vocab_size=50,
    hidden_size=16,
    num_hidden_layers=layers,
    num_attention_heads=4,
    intermediate_size=32,
    max_position_embeddings=16,
  )


def _features(batch=3, length=8, seed=0):
  rng = np.random.RandomState(seed)
  mask = np.zeros((batch, length), np.int32)
  for row, n in enumerate(rng.randint(3, length + 1, size=batch)):
    mask[row, :n] = 1
  weights = (rng.rand(batch, length) < 0.5) * mask
  weights[:, 0] = 0  # [CLS]
  return {
    "input_ids": rng.randint(1, 50, (batch, length)).astype(np.int32) * mask,
    "input_mask": mask,
    "segment_ids": np.zeros_like(mask),
    "label_ids": rng.randint(0, NUM_LABELS, (batch, length)).astype(np.int32)
    * mask,
    "label_weights": weights.astype(np.float32),
  }


def _log_softmax(x):
  x = x - x.max(-1, keepdims=True)
  return x - np.log(np.exp(x).sum(-1, keepdims=True))


def test_fine_tune_logits_and_weighted_loss():
  model = NerModel(_config(2), NUM_LABELS)
  features = _features()
  outputs = model(features, training=False)
  sequence = model.encoder(features)["sequence_output"].numpy()
  weights = model.head.projection.output_weights.numpy()
  bias = model.head.projection.output_bias.numpy()
  logits = sequence @ weights.T + bias
  np.testing.assert_allclose(outputs["logits"], logits, atol=1e-5)
  np.testing.assert_array_equal(outputs["predictions"], logits.argmax(-1))
  nll = -np.take_along_axis(
    _log_softmax(logits), features["label_ids"][..., None], -1
  )[..., 0]
  loss_sum = (nll * features["label_weights"]).sum(-1)
  np.testing.assert_allclose(outputs["loss_sum"], loss_sum, rtol=1e-5)
  assert float(tagging_loss(features, outputs)) == pytest.approx(
    loss_sum.sum() / features["label_weights"].sum(), rel=1e-5
  )


def test_head_names_and_registry():
  config = _config(1)
  head = NerHead(config, 9)
  assert {k: tuple(v.shape) for k, v in head.tf1_variables().items()} == {
    "cls/token_classifier/output_weights": (9, 16),
    "cls/token_classifier/output_bias": (9,),
  }
  found = heads_for_variables(
    config, {"cls/token_classifier/output_weights": (9, 512)}, None
  )
  assert list(found) == ["token_classifier"]
  assert found["token_classifier"].projection.output_weights.shape == (9, 512)
  model = NerModel(config, 9, "last", lstm_units=8)
  names = model.tf1_variables()
  assert names["cls/token_classifier/output_weights"].shape == (9, 16)
  assert "bert/encoder/layer_0/output/dense/kernel" in names


@pytest.mark.process
def test_feature_modes_combine_the_frozen_layers():
  features = _features()
  for mode in FEATURE_MODES[1:]:
    model = NerModel(_config(), NUM_LABELS, mode, lstm_units=8)
    outputs = model.encoder(features)
    layers = [outputs["embedding_output"]] + outputs["encoder_outputs"]
    layers = [x.numpy() for x in layers]
    expected = {
      "embeddings": layers[0],
      "second_to_last": layers[3],
      "last": layers[4],
      # The learned mix starts as the plain mean.
      "weighted_sum_last_four": np.mean(layers[1:], axis=0),
      "concat_last_four": np.concatenate(layers[1:], axis=-1),
      "weighted_sum_all": np.mean(layers[1:], axis=0),
    }[mode]
    np.testing.assert_allclose(
      model.combined_layers(features), expected, atol=1e-5, err_msg=mode
    )
    logits = model(features, training=False)["logits"]
    assert logits.shape == (3, 8, NUM_LABELS)
    assert model.head.projection.output_weights.shape == (NUM_LABELS, 16)
  with pytest.raises(InputError, match="--feature_mode=mean: expected one"):
    check_feature_mode("mean", 4)
  with pytest.raises(
    InputError, match="concat_last_four needs more layers than the model's 2"
  ):
    check_feature_mode("concat_last_four", 2)


@pytest.mark.process
def test_feature_mode_trains_bilstm_on_a_frozen_encoder(tmp_path):
  task = NerTask(_config(), NUM_LABELS, 8, "concat_last_four", lstm_units=8)
  trainer = Trainer(
    task,
    lambda: optimization.create_optimizer(1e-2, 6, 0),
    str(tmp_path),
    progress=False,
    save_checkpoints_steps=0,
  )
  model = trainer.model
  encoder = {id(v) for v in model.encoder.weights}
  assert encoder and not encoder & {id(v) for v in model.trainable_variables}
  features = _features(batch=4)
  # The frozen encoder runs without dropout.
  np.testing.assert_array_equal(
    model.encode(features, training=False)["sequence_output"],
    model.combined_layers(features)[..., -16:],
  )
  before = [v.numpy() for v in model.weights]

  def dataset_fn(ctx):
    del ctx  # one pipeline
    return tf.data.Dataset.from_tensors(features).repeat()

  history = trainer.train(dataset_fn, 6)
  assert history[-1]["step"] == 6
  changed = {
    id(v)
    for v, value in zip(model.weights, before)
    if not np.array_equal(v.numpy(), value)
  }
  assert not changed & encoder
  assert {id(v) for v in model.trainable_variables} <= changed
  assert id(model.bilstm_1.backward_layer.cell.kernel) in changed
