"""`BertEncoder(..., skip_padding=True)`: the dense layers on real tokens only,
against the original's outputs (golden/encoder) and the padded path."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf.training import distribution
from tests.helpers.checkpoints import ENCODER_DIR
from tests.helpers.checkpoints import golden_inputs
from tests.helpers.checkpoints import load_golden


def _uneven_inputs():
  """The golden inputs with rows cut to different lengths (the golden rows
  are padded too, but by less)."""
  inputs = golden_inputs()
  mask = inputs["input_mask"].copy()
  lengths = [mask.shape[1], 3]  # row 1: [CLS] + 2 tokens
  for row, length in enumerate(lengths[: len(mask)]):
    mask[row, length:] = 0
  return dict(inputs, input_mask=mask)


def _both(encoder, inputs):
  """(padded path, skip_padding) outputs, each in one tf.function, as a
  SavedModel runs them."""
  plain = tf.function(lambda x: encoder(x))(inputs)
  packed = tf.function(lambda x: encoder(x, skip_padding=True))(inputs)
  return plain, packed


def test_real_tokens_as_the_original_and_padding_zero():
  _, encoder, _, _ = load_golden("ckpt_a")
  inputs = golden_inputs()
  real = inputs["input_mask"].astype(bool)
  assert not real.all()  # the golden batch has padding to skip
  plain, packed = _both(encoder, inputs)
  expected = np.load(ENCODER_DIR / "expected_a.npz")
  for i in range(len(packed["encoder_outputs"])):
    got = np.asarray(packed["encoder_outputs"][i])
    np.testing.assert_allclose(
      got[real], expected["layer_%d" % i][real], rtol=0, atol=1e-4
    )
    np.testing.assert_allclose(
      got[real], np.asarray(plain["encoder_outputs"][i])[real], atol=1e-6
    )
    assert not got[~real].any()  # padded positions: exactly 0
  np.testing.assert_allclose(
    packed["pooled_output"], expected["pooled_output"], rtol=0, atol=1e-5
  )
  np.testing.assert_array_equal(
    packed["embedding_output"], plain["embedding_output"]
  )


def test_uneven_rows_each_as_alone():
  _, encoder, _, _ = load_golden("ckpt_a")
  inputs = _uneven_inputs()
  _, packed = _both(encoder, inputs)
  for row in range(len(inputs["input_ids"])):
    length = int(inputs["input_mask"][row].sum())
    alone = encoder({k: v[row : row + 1, :length] for k, v in inputs.items()})[
      "sequence_output"
    ][0]
    np.testing.assert_allclose(
      packed["sequence_output"][row, :length], alone, atol=1e-5
    )


def test_bfloat16_as_the_padded_path():
  with distribution.policy_scope("bfloat16"):
    _, encoder, _, _ = load_golden("ckpt_a")
    inputs = _uneven_inputs()
    plain, packed = _both(encoder, inputs)
  assert keras.mixed_precision.global_policy().name == "float32"
  real = inputs["input_mask"].astype(bool)
  got = np.asarray(tf.cast(packed["sequence_output"], tf.float32))
  want = np.asarray(tf.cast(plain["sequence_output"], tf.float32))
  assert packed["sequence_output"].dtype == tf.bfloat16
  # Within one bfloat16 rounding of the padded path's values (2**-8).
  np.testing.assert_allclose(
    got[real], want[real], rtol=0, atol=np.abs(want).max() / 256
  )
  assert not got[~real].any()


@pytest.mark.parametrize(
  "kwargs", [{"training": True}, {"output_attentions": True}]
)
def test_only_when_predicting(kwargs):
  _, encoder, _, _ = load_golden("ckpt_a")
  with pytest.raises(ValueError, match="skip_padding is for predicting"):
    encoder(golden_inputs(), skip_padding=True, **kwargs)
