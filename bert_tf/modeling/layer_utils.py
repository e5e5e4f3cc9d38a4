"""Small factories shared by the BERT layers, so every layer builds its
Dense/LayerNorm pieces and names their TF1 variables the same way.

Example:
    proj = dense(config, config.hidden_size, "dense", policy)
    proj.build((None, config.hidden_size))
    names = dense_variables("bert/pooler/dense", proj)
    # {"bert/pooler/dense/kernel": <kernel>, "bert/pooler/dense/bias": <bias>}
"""

import keras

from bert_tf.modeling.bert_config import LAYER_NORM_EPSILON

# tf.contrib.layers.layer_norm's epsilon for float32 (Keras defaults to 1e-3).


def create_initializer(initializer_range):
  """Truncated normal at 2 stddev, like tf.truncated_normal_initializer."""
  return keras.initializers.TruncatedNormal(stddev=initializer_range)


def dense(config, units, name, policy, activation=None):
  """A Dense layer with the original's kernel init and zero bias."""
  return keras.layers.Dense(
      units,
      activation=activation,
      kernel_initializer=create_initializer(config.initializer_range),
      name=name,
      dtype=policy)


class Dropout(keras.layers.Dropout):
  """keras Dropout with its keep mask drawn in float32 whatever the compute
  dtype: a bfloat16 uniform has 128 values in [0, 1), so Keras' own mask
  drops 10.16% for rate 0.1 under mixed_bfloat16. In float32 it draws the
  same numbers as keras.layers.Dropout (same seed stream, same mask)."""

  def call(self, inputs, training=False):
    if not training or not self.rate:
      return inputs
    noise = keras.random.uniform(keras.ops.shape(inputs), dtype="float32",
                                 seed=self.seed_generator)
    kept = inputs * keras.ops.cast(1.0 / (1.0 - self.rate), inputs.dtype)
    return keras.ops.where(noise >= self.rate, kept,
                           keras.ops.zeros_like(inputs))


def dropout(rate, policy):
  return Dropout(rate, dtype=policy)


def layer_norm(name, policy):
  """LayerNorm over the last axis; Keras computes it in float32 even when
  the policy is float16/bfloat16."""
  return keras.layers.LayerNormalization(
      epsilon=LAYER_NORM_EPSILON, name=name, dtype=policy)


def dense_variables(prefix, layer):
  return {prefix + "/kernel": layer.kernel, prefix + "/bias": layer.bias}


def layer_norm_variables(prefix, layer):
  return {prefix + "/beta": layer.beta, prefix + "/gamma": layer.gamma}


def additive_attention_mask(input_mask, dtype):
  """[B, S] 1/0 key mask -> [B, 1, 1, S] adder: 0 for real keys, -10000 for
  padded keys (the original's value; -inf would change fully masked rows)."""
  mask = keras.ops.cast(input_mask, dtype)
  return (1.0 - mask[:, None, None, :]) * -10000.0
