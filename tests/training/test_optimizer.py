"""The optimizer against the original's golden trajectories (TF1 code)."""

import contextlib
import re

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf.checkpoints import checkpoint_io
from bert_tf.modeling.bert_config import BertConfig
from bert_tf.modeling.bert_encoder import BertEncoder
from bert_tf.modeling.heads.squad_head import SquadHead
from bert_tf.training import optimization
from bert_tf.training.optimization import WarmupLinearDecay


def _load(fixtures_dir, name):
  data = np.load(fixtures_dir / "optimizer" / name)
  return {k: data[k] for k in data.files}


def _scoped_variable(tf1_name, value):
  """A Keras variable whose path is the TF1 name (scopes can't hold '/')."""
  *scopes, leaf = tf1_name.split("/")
  with contextlib.ExitStack() as stack:
    for scope in scopes:
      stack.enter_context(keras.name_scope(scope))
    variable = keras.Variable(value.astype(np.float32), name=leaf)
  assert variable.path == tf1_name
  return variable


@pytest.mark.parametrize("fused", [True, False])
@pytest.mark.parametrize("name", ["opt_default.npz", "opt_noclip_const.npz"])
def test_golden_trajectory(fixtures_dir, name, fused):
  g = _load(fixtures_dir, name)
  names = [str(n) for n in g["names"]]
  variables = [_scoped_variable(n, g["init/" + n]) for n in names]
  opt = optimization.create_optimizer(
    float(g["init_lr"]),
    int(g["num_train_steps"]),
    int(g["num_warmup_steps"]),
    fused=fused,
  )
  close = dict(rtol=1e-5, atol=1e-7)
  for t in range(len(g["lr"])):
    np.testing.assert_allclose(float(opt.learning_rate), g["lr"][t], **close)
    grads = [g["grads/" + n][t] for n in names]
    clipped = opt._clip_gradients(grads)  # pylint: disable=protected-access
    if fused:  # the factor is applied inside each variable's update
      clipped = [np.asarray(c) * float(opt._clip_factor) for c in clipped]  # pylint: disable=protected-access
    opt.apply(grads, variables)
    for n, var, c in zip(names, variables, clipped):
      index = opt._get_variable_index(var)  # pylint: disable=protected-access
      np.testing.assert_allclose(np.asarray(c), g["clipped/" + n][t], **close)
      np.testing.assert_allclose(var.numpy(), g["param/" + n][t], **close)
      np.testing.assert_allclose(opt._m[index].numpy(), g["m/" + n][t], **close)
      np.testing.assert_allclose(opt._v[index].numpy(), g["v/" + n][t], **close)
  assert int(opt.iterations) == len(g["lr"])


def test_weight_decay_exclusion_follows_tf1_names(fixtures_dir):
  g = _load(fixtures_dir, "opt_default.npz")
  opt = optimization.create_optimizer(1e-3, 10, 3)
  decayed = {
    str(n): opt.uses_weight_decay(_scoped_variable(str(n), g["init/" + str(n)]))
    for n in g["names"]
  }
  assert [n for n, d in decayed.items() if d] == [
    "bert/encoder/layer_0/attention/self/query/kernel",
    "bert/embeddings/word_embeddings",
  ]


def test_schedule_drops_at_end_of_warmup():
  schedule = WarmupLinearDecay(1.0, num_train_steps=1000, num_warmup_steps=100)
  # Table of section 3.6 of the reference (normalised lr for T=1000, W=100).
  expected = {
    0: 0.0,
    1: 0.01,
    50: 0.5,
    99: 0.99,
    100: 0.90,
    500: 0.5,
    999: 0.001,
    1000: 0.0,
    1500: 0.0,
  }
  for step, lr in expected.items():
    np.testing.assert_allclose(float(schedule(step)), lr, atol=1e-6)
  no_warmup = WarmupLinearDecay(2.0, num_train_steps=4, num_warmup_steps=0)
  assert [float(no_warmup(t)) for t in range(5)] == [2.0, 1.5, 1.0, 0.5, 0.0]


def test_lamb_and_bad_type():
  opt = optimization.create_optimizer(1e-3, 10, 1, optimizer_type="lamb")
  assert isinstance(opt, keras.optimizers.Lamb)
  assert opt.global_clipnorm == 1.0
  with pytest.raises(optimization.InputError, match="--optimizer"):
    optimization.create_optimizer(1e-3, 10, 1, optimizer_type="sgd")


def test_encoder_exclusion_matches_original_names():
  """On our encoder + SQuAD head, Keras paths decay exactly the variables
  whose original TF1 names the original decays."""
  config = BertConfig.from_dict(
    dict(
      vocab_size=50,
      hidden_size=8,
      num_hidden_layers=2,
      num_attention_heads=2,
      intermediate_size=16,
      max_position_embeddings=16,
    )
  )
  encoder, head = BertEncoder(config), SquadHead(config)
  head(encoder({"input_ids": tf.zeros([1, 4], tf.int32)})["sequence_output"])
  opt = optimization.create_optimizer(1e-3, 10, 1)
  name_map = checkpoint_io.tf1_name_map(encoder, squad=head)
  assert len(name_map) == len(encoder.trainable_variables) + 2
  for name, variable in name_map.items():
    original = not re.search("LayerNorm|layer_norm|bias", name)
    assert opt.uses_weight_decay(variable) == original, (name, variable.path)


def _numpy_update(g, var, m, v, lr, decay):
  """The original update in float32 numpy, one rounding per op."""
  f = np.float32
  m = f(0.9) * m + f(1.0 - 0.9) * g
  v = f(0.999) * v + f(1.0 - 0.999) * np.square(g)
  update = m / (np.sqrt(v) + f(1e-6))
  if decay:
    update = update + f(0.01) * var
  return var - f(lr) * update, m, v


@pytest.mark.parametrize("fused", [False, True])
def test_update_is_the_original_op_by_op(fused):
  """Unfused: bit-identical to one float32 rounding per op; fused (XLA,
  multiply-adds contracted): within a few ulps of it."""
  rng = np.random.default_rng(0)
  shape = (256, 512)
  init = [
    rng.normal(size=shape).astype(np.float32) * 0.02,
    rng.normal(size=shape).astype(np.float32) * 1e-4,
    np.abs(rng.normal(size=shape)).astype(np.float32) * 1e-6,
  ]
  grads = [rng.normal(size=shape).astype(np.float32) * 1e-3 for _ in range(3)]
  variable = _scoped_variable("bert/dense/kernel", init[0])
  opt = optimization.AdamWeightDecay(learning_rate=1e-3, fused=fused)
  opt.build([variable])
  index = opt._get_variable_index(variable)  # pylint: disable=protected-access
  opt._m[index].assign(init[1])  # pylint: disable=protected-access
  opt._v[index].assign(init[2])  # pylint: disable=protected-access
  expected = init
  for g in grads:
    opt.apply([g], [variable])
    expected = _numpy_update(g, *expected, lr=1e-3, decay=True)
  got = [variable.numpy(), opt._m[index].numpy(), opt._v[index].numpy()]  # pylint: disable=protected-access
  for a, b in zip(got, expected):
    if fused:  # a few ulps of the array's scale (cancellation near 0)
      np.testing.assert_allclose(
        a, b, rtol=0, atol=4 * np.spacing(np.max(np.abs(b)))
      )
    else:
      np.testing.assert_array_equal(a, b)
  if fused:  # XLA really ran: contracted multiply-adds change some bits
    assert not all(np.array_equal(a, b) for a, b in zip(got, expected))
