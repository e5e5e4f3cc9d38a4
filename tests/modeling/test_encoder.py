"""Encoder + heads vs outputs of the original modeling.py (golden/encoder)."""

import math

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf.io_utils import InputError
from bert_tf.modeling.activations import gelu
from bert_tf.modeling.activations import gelu_exact
from bert_tf.modeling.bert_config import BertConfig
from bert_tf.modeling.bert_encoder import BertEncoder
from bert_tf.training import distribution
from tests.helpers.checkpoints import ENCODER_DIR
from tests.helpers.checkpoints import golden_inputs
from tests.helpers.checkpoints import load_golden

# Tolerances from golden/README.md.
_LOOSE = 1e-4
_TIGHT = 1e-5


def _outputs(name):
  _, encoder, heads, report = load_golden(name)
  inputs = golden_inputs()
  out = encoder(inputs)
  got = {
    "embedding_output": out["embedding_output"],
    "sequence_output": out["sequence_output"],
    "pooled_output": out["pooled_output"],
  }
  for i, layer in enumerate(out["encoder_outputs"]):
    got["layer_%d" % i] = layer
  start, end = heads["squad"](out["sequence_output"])
  got["squad_start_logits"], got["squad_end_logits"] = start, end
  if "masked_lm" in heads:
    batch, seq = inputs["input_ids"].shape
    positions = np.tile(np.arange(seq), (batch, 1))
    got["mlm_log_probs"] = heads["masked_lm"](out["sequence_output"], positions)
    got["nsp_log_probs"] = heads["next_sentence"](out["pooled_output"])
    logits = heads["classifier"](out["pooled_output"], training=False)
    got["classifier_logits"] = logits
    got["classifier_probs"] = tf.nn.softmax(logits)
  return got, report


@pytest.mark.parametrize("name", ["ckpt_a", "ckpt_b"])
def test_matches_original(name):
  got, _ = _outputs(name)
  expected = np.load(ENCODER_DIR / ("expected_%s.npz" % name[-1]))
  assert sorted(got) == sorted(expected.files)
  for key in expected.files:
    atol = _TIGHT if key.startswith(("nsp", "squad", "classifier")) else _LOOSE
    np.testing.assert_allclose(
      np.asarray(got[key]), expected[key], rtol=0, atol=atol, err_msg=key
    )


def test_ckpt_b_skips_optimizer_state():
  _, _, heads, report = load_golden("ckpt_b")
  assert set(heads) == {"squad"}
  assert len(report.loaded) == 25 and not report.not_in_checkpoint
  assert not report.checkpoint_only
  assert "global_step" in report.optimizer_state
  assert len(report.optimizer_state) == 51  # 25 * (adam_m, adam_v) + step


def test_gelu_forms():
  x = np.array([-3.0, -1.0, 0.5, 2.0], np.float32)
  tanh_form = (
    0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
  )
  erf_form = 0.5 * x * (1 + np.array([math.erf(v / math.sqrt(2)) for v in x]))
  np.testing.assert_allclose(np.asarray(gelu(x)), tanh_form, atol=1e-6)
  np.testing.assert_allclose(np.asarray(gelu_exact(x)), erf_form, atol=1e-6)


def _tiny_config(**kwargs):
  return BertConfig(
    vocab_size=50,
    hidden_size=16,
    num_hidden_layers=2,
    num_attention_heads=4,
    intermediate_size=32,
    max_position_embeddings=12,
    type_vocab_size=2,
    **kwargs,
  )


def test_too_long_input_is_rejected():
  encoder = BertEncoder(_tiny_config())
  with pytest.raises(InputError, match="max_position_embeddings 12"):
    encoder({"input_ids": np.zeros((1, 13), np.int32)})


def test_defaults_dropout_and_padding_queries():
  encoder = BertEncoder(_tiny_config())
  ids = np.array([[1, 2, 3, 0]], np.int32)
  mask = np.array([[1, 1, 1, 0]], np.int32)
  base = encoder(
    {
      "input_ids": ids,
      "input_mask": np.ones_like(ids),
      "segment_ids": np.zeros_like(ids),
    }
  )["sequence_output"]
  default = encoder({"input_ids": ids})["sequence_output"]
  np.testing.assert_array_equal(base, default)
  masked = encoder({"input_ids": ids, "input_mask": mask})["sequence_output"]
  # Changing a masked key's id does not change real positions.
  ids2 = ids.copy()
  ids2[0, 3] = 7
  masked2 = encoder({"input_ids": ids2, "input_mask": mask})["sequence_output"]
  np.testing.assert_allclose(masked[:, :3], masked2[:, :3], atol=1e-6)
  assert not np.allclose(masked[:, 3], masked2[:, 3])
  train1 = encoder({"input_ids": ids}, training=True)["sequence_output"]
  assert not np.allclose(train1, base)


def test_jit_and_mixed_precision():
  _, encoder, _, _ = load_golden("ckpt_a")
  inputs = golden_inputs()
  expected = np.load(ENCODER_DIR / "expected_a.npz")["sequence_output"]
  jitted = tf.function(
    lambda x: encoder(x)["sequence_output"], jit_compile=True
  )
  np.testing.assert_allclose(jitted(inputs), expected, atol=_LOOSE)
  keras.mixed_precision.set_global_policy("mixed_float16")
  try:
    _, half, _, _ = load_golden("ckpt_a")
  finally:
    keras.mixed_precision.set_global_policy("float32")
  out = half(inputs)
  assert out["sequence_output"].dtype == tf.float16
  assert half.embedding_table.dtype == "float32"
  np.testing.assert_allclose(
    tf.cast(out["sequence_output"], tf.float32), expected, atol=2e-2
  )


def test_object_checkpoint_holds_every_weight(tmp_path):
  # A tf.train.Checkpoint of the model alone (no optimizer) must restore
  # every layer, or a resumed or exported run silently keeps random blocks.
  config = _tiny_config()
  config.num_hidden_layers = 3
  encoder = BertEncoder(config)
  path = tf.train.Checkpoint(model=encoder).save(str(tmp_path / "ckpt"))
  fresh = BertEncoder(config)
  tf.train.Checkpoint(model=fresh).restore(
    path
  ).assert_existing_objects_matched()
  for expected, actual in zip(encoder.weights, fresh.weights):
    np.testing.assert_array_equal(expected.numpy(), actual.numpy())


def test_bfloat16_against_original():
  """mixed_bfloat16: the layers compute in bfloat16, everything that feeds a
  loss or a probability (head logits, log-softmax) is float32, the weights
  stay float32, and every output is within bfloat16 rounding (2% of its
  range; one bfloat16 rounding is 0.4%) of the original's float32 one."""
  with distribution.policy_scope("mixed_bfloat16"):
    got, _ = _outputs("ckpt_a")
    _, encoder, _, _ = load_golden("ckpt_a")
  assert keras.mixed_precision.global_policy().name == "float32"
  assert {v.dtype for v in encoder.weights} == {"float32"}
  expected = np.load(ENCODER_DIR / "expected_a.npz")
  for key in expected.files:
    want = (
      tf.bfloat16
      if key.startswith(("layer", "embedding", "sequence", "pooled"))
      else tf.float32
    )
    assert got[key].dtype == want, key
    value = np.asarray(tf.cast(got[key], tf.float32))
    np.testing.assert_allclose(
      value,
      expected[key],
      rtol=0,
      err_msg=key,
      atol=0.02 * np.max(np.abs(expected[key])),
    )
  # Log-softmax in float32: probabilities sum to 1 far below bfloat16's
  # resolution (1/256).
  log_probs = np.asarray(got["mlm_log_probs"], np.float64)
  np.testing.assert_allclose(np.exp(log_probs).sum(-1), 1.0, atol=1e-5)
