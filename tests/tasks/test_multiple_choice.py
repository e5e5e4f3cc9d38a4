"""MultipleChoiceModel against a hand computation on the tiny ckpt_b config:
per choice, the encoder's pooled output . w + b, softmax over the choices,
cross-entropy of the label; the head's TF1 names and registry entry."""

import numpy as np
import pytest

from bert_tf.checkpoints import checkpoint_io
from bert_tf.modeling import pretrained
from bert_tf.modeling.bert_config import BertConfig
from bert_tf.modeling.heads import registered_heads
from bert_tf.modeling.heads.multiple_choice_head import MultipleChoiceHead
from bert_tf.tasks.multiple_choice import MultipleChoiceTask
from tests.helpers.checkpoints import ENCODER_DIR

B, C, S = 2, 3, 8


@pytest.fixture(scope="module")
def config():
  return BertConfig.from_json_file(
    str(ENCODER_DIR / "ckpt_b" / "bert_config.json")
  )


def _features(config):
  rng = np.random.RandomState(0)
  lengths = rng.randint(3, S + 1, size=(B, C))
  mask = (np.arange(S) < lengths[..., None]).astype(np.int32)
  return {
    "input_ids": rng.randint(1, config.vocab_size, (B, C, S)) * mask,
    "input_mask": mask,
    "segment_ids": (np.arange(S) >= 3).astype(np.int32) * mask,
    "label_ids": np.array([2, 0], np.int32),
    "is_real_example": np.ones(B, np.int32),
  }


def test_scores_are_pooled_dot_w_plus_b_softmax(config):
  task = MultipleChoiceTask(config, C, S)
  model = task.build_model()
  rng = np.random.RandomState(1)
  w = rng.normal(size=(1, config.hidden_size)).astype(np.float32)
  model.head.projection.output_weights.assign(w)
  model.head.projection.output_bias.assign([0.75])
  features = _features(config)
  outputs = model(features, training=False)

  # Choice by choice through the encoder alone.
  logits = np.zeros((B, C))
  for c in range(C):
    pooled = model.encoder(
      {
        k: features[k][:, c] for k in ("input_ids", "input_mask", "segment_ids")
      },
      training=False,
    )["pooled_output"].numpy()
    logits[:, c] = pooled @ w[0] + 0.75
  probabilities = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
  losses = -np.log(probabilities[np.arange(B), features["label_ids"]])
  np.testing.assert_allclose(outputs["logits"], logits, atol=1e-5)
  np.testing.assert_allclose(outputs["probabilities"], probabilities, atol=1e-6)
  np.testing.assert_allclose(outputs["per_example_loss"], losses, rtol=1e-5)
  assert float(task.loss(features, outputs)) == pytest.approx(
    losses.mean(), rel=1e-5
  )
  spec = task.feature_spec(True)
  assert spec["input_ids"].shape == [C, S]
  assert spec["label_ids"].shape == []


def test_head_names_registry_and_checkpoint(config, tmp_path):
  assert registered_heads()["multiple_choice"] is MultipleChoiceHead
  model = MultipleChoiceTask(config, C, S).build_model()
  names = model.tf1_variables()
  assert names["cls/multiple_choice/output_weights"].shape == (
    1,
    config.hidden_size,
  )
  assert names["cls/multiple_choice/output_bias"].shape == (1,)
  assert len(names) == len(model.encoder.tf1_variables()) + 2
  # A TF1 checkpoint with the head loads back with it, found by its marker.
  model.head.projection.output_bias.assign([-1.5])
  prefix = str(tmp_path / "bert_model.ckpt")
  checkpoint_io.save_tf1_checkpoint(prefix, names)
  _, heads, report = pretrained.load_tf1_model(config, prefix)
  assert sorted(heads) == ["multiple_choice"] and not report.not_in_checkpoint
  np.testing.assert_array_equal(
    heads["multiple_choice"].projection.output_bias.numpy(), [-1.5]
  )
