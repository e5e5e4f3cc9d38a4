"""`TransformerBlock`: one post-LN BERT layer (`bert/encoder/layer_i`).

Example:
    block = TransformerBlock(config, name="layer_0")
    y = block(x, attention_adder, training=False)  # [B, S, H]
    y, probs = block(x, attention_adder, return_attention=True)  # + [B,A,S,S]
    # Predicting on the real tokens only (x [N, H], rows = tf.where(mask)):
    y = block(x, attention_adder, rows=rows)  # [N, H]

    a = LayerNorm(dropout(Dense_H(self_attention(x))) + x)
    y = LayerNorm(dropout(Dense_H(act(Dense_I(a)))) + a)
"""

import keras

from bert_tf.modeling import layer_utils
from bert_tf.modeling import xla_fused
from bert_tf.modeling.activations import get_activation
from bert_tf.modeling.bert_self_attention import BertSelfAttention


class TransformerBlock(keras.layers.Layer):
  """Self-attention + feed-forward, each with residual and LayerNorm."""

  def __init__(self, config, **kwargs):
    super().__init__(**kwargs)
    policy = self.dtype_policy
    h, i = config.hidden_size, config.intermediate_size
    self.attention = BertSelfAttention(config, name="self", dtype=policy)
    self.attention_output = layer_utils.dense(config, h, "dense", policy)
    self.attention_layer_norm = layer_utils.layer_norm("LayerNorm", policy)
    self.intermediate = layer_utils.dense(
      config,
      i,
      "intermediate_dense",
      policy,
      activation=get_activation(config.hidden_act),
    )
    self.output_dense = layer_utils.dense(config, h, "output_dense", policy)
    self.output_layer_norm = layer_utils.layer_norm("output_LayerNorm", policy)
    self.dropout = layer_utils.dropout(config.hidden_dropout_prob, policy)
    for layer, width in (
      (self.attention_output, h),
      (self.intermediate, h),
      (self.output_dense, i),
    ):
      layer.build((None, width))
    for layer in (self.attention_layer_norm, self.output_layer_norm):
      layer.build((None, h))

  def call(
    self, x, attention_adder, training=False, return_attention=False, rows=None
  ):
    # Dense and LayerNorm run on [B*S, H], the original's 2D layout: a
    # Dense on [B, S, H] reshapes between MatMul and BiasAdd, which keeps
    # oneDNN from fusing MatMul + BiasAdd (+ GELU when predicting). With
    # `rows`, x is already 2D: the real tokens.
    if rows is None:
      shape = keras.ops.shape(x)
      flat = keras.ops.reshape(x, (-1, x.shape[-1]))
    else:
      shape, flat = keras.ops.shape(attention_adder)[::3], x
    outputs = self.attention(
      flat,
      attention_adder,
      batch=shape[0],
      seq=shape[1],
      training=training,
      return_probs=return_attention,
      rows=rows,
    )
    context, probs = outputs if return_attention else (outputs, None)
    if training:  # the same function, its element-wise work fused by XLA
      a = self._fused_output(
        self.attention_output, context, flat, self.attention_layer_norm
      )
      h = xla_fused.bias_activation(
        layer_utils.matmul_dx_first(a, self.intermediate.kernel),
        self.intermediate.bias,
        self.intermediate.activation,
      )
      y = self._fused_output(self.output_dense, h, a, self.output_layer_norm)
    else:
      a = self.attention_layer_norm(self.attention_output(context) + flat)
      # Dense applies the activation: oneDNN fuses MatMul + BiasAdd + GELU
      # only inside the layer.
      y = self.output_layer_norm(self.output_dense(self.intermediate(a)) + a)
    if rows is None:
      y = keras.ops.reshape(y, shape)
    return (y, probs) if return_attention else y

  def _fused_output(self, dense, x, residual, norm):
    """norm(dropout(dense(x)) + residual): the matmul in TF (oneDNN), the
    rest one XLA kernel each way."""
    y = layer_utils.matmul_dx_first(x, dense.kernel)
    rate = self.dropout.rate
    seed = self.dropout.next_seed() if rate else None
    return xla_fused.bias_dropout_add_norm(
      y, dense.bias, seed, residual, norm.gamma, norm.beta, norm.epsilon, rate
    )

  def tf1_variables(self, prefix):
    """Original names under `prefix` (e.g. `bert/encoder/layer_0`)."""
    names = self.attention.tf1_variables(prefix + "/attention/self")
    for scope, layer in (
      ("attention/output/dense", self.attention_output),
      ("intermediate/dense", self.intermediate),
      ("output/dense", self.output_dense),
    ):
      names.update(layer_utils.dense_variables(prefix + "/" + scope, layer))
    for scope, layer in (
      ("attention/output/LayerNorm", self.attention_layer_norm),
      ("output/LayerNorm", self.output_layer_norm),
    ):
      names.update(
        layer_utils.layer_norm_variables(prefix + "/" + scope, layer)
      )
    return names
