"""`BertSelfAttention`: the original `attention_layer` for self-attention.

Example:
    attention = BertSelfAttention(config)
    # x: [B*S, H], the block's 2D layout, with B and S
    context = attention(x, attention_adder, batch=B, seq=S)  # [B*S, H]
    context, probs = attention(x, attention_adder, batch=B, seq=S,
                               return_probs=True)
    # probs: [B, A, S, S] float32 softmax (before dropout)
    # Predicting on the real tokens only: x [N, H] holds the rows of the
    # [B*S, H] layout at `rows` ([N, 1], `tf.where(input_mask)`).
    context = attention(x, attention_adder, batch=B, seq=S, rows=rows)

q, k, v are fused H->H projections (kernels [H, H], as the TF1 variables);
scores are multiplied by 1/sqrt(H/A) after q.k^T, padded keys get -10000
(`attention_adder` from `layer_utils.additive_attention_mask`), the softmax
computes in float32 (see `_logits`) and dropout is applied to the
probabilities (training: `xla_fused.dropout_of_softmax`).
"""

import math

import keras
import tensorflow as tf

from bert_tf.io_utils import InputError
from bert_tf.modeling import layer_utils
from bert_tf.modeling import small_inputs
from bert_tf.modeling import xla_fused


def _power_of_two(scale):
  """Multiplying by it is exact in float32 and bfloat16."""
  return math.frexp(scale)[0] == 0.5


def _heads_transpose(t):
  """[B, S, A, D] <-> [B, A, S, D]. On few tokens in 16 bits, as int16:
  Eigen's transpose instead of a oneDNN reorder and its fixed cost
  (`small_inputs`); the same bits."""
  if t.dtype.size == 2 and small_inputs.active():
    moved = tf.transpose(tf.bitcast(t, tf.int16), (0, 2, 1, 3))
    return tf.bitcast(moved, t.dtype)
  return keras.ops.transpose(t, (0, 2, 1, 3))


class BertSelfAttention(keras.layers.Layer):
  """Multi-head self-attention with the original's math and variable layout."""

  def __init__(self, config, **kwargs):
    super().__init__(**kwargs)
    if config.hidden_size % config.num_attention_heads:
      raise InputError(
        "hidden_size %d is not a multiple of num_attention_heads %d"
        % (config.hidden_size, config.num_attention_heads)
      )
    self.num_heads = config.num_attention_heads
    self.head_size = config.hidden_size // config.num_attention_heads
    policy = self.dtype_policy
    self.query = layer_utils.dense(config, config.hidden_size, "query", policy)
    self.key = layer_utils.dense(config, config.hidden_size, "key", policy)
    self.value = layer_utils.dense(config, config.hidden_size, "value", policy)
    self.dropout = layer_utils.dropout(
      config.attention_probs_dropout_prob, policy
    )
    for layer in (self.query, self.key, self.value):
      layer.build((None, config.hidden_size))

  def call(
    self,
    x,
    attention_adder,
    batch,
    seq,
    training=False,
    return_probs=False,
    rows=None,
  ):
    projections = [layer(x) for layer in (self.query, self.key, self.value)]
    if rows is not None:  # padded keys: 0 (their adder zeroes them anyway)
      width = self.num_heads * self.head_size
      projections = [
        tf.scatter_nd(rows, t, (batch * seq, width)) for t in projections
      ]
    q, k, v = (
      keras.ops.reshape(t, (batch, seq, self.num_heads, self.head_size))
      for t in projections
    )
    # Predicting, the scale multiplies the scores, where grappler fuses
    # BatchMatMul * scale + adder into one oneDNN kernel
    # (`_MklFusedBatchMatMulV2`: no pass of its own adds the mask). BERT-Base
    # inference, paired rounds against the einsums bfloat16 used before:
    # +2.9% at 128x8 and +1.9% at 384x8; float32 (transposes before too):
    # 1.003x and 1.031x at 384x8. Otherwise a power of two (head size 64:
    # 1/8) scales q, as exactly as the scores, and q is S/(H/A) times smaller.
    scale = 1.0 / math.sqrt(float(self.head_size))
    if _power_of_two(scale) and (training or return_probs):
      q, scale = q * scale, 1.0
    q, k, v = (_heads_transpose(t) for t in (q, k, v))
    scores = keras.ops.matmul(q, keras.ops.transpose(k, (0, 1, 3, 2)))
    # Training with attention dropout: oneDNN's softmax, then dropout and
    # its gradient as XLA kernels whose mask is a hash (no [B, A, S, S]
    # mask drawn or stored).
    fused = training and self.dropout.rate and not return_probs
    logits = self._logits(
      scores,
      attention_adder,
      scale,
      float32=(training or return_probs) and not fused,
    )
    if fused:
      probs = keras.ops.cast(
        xla_fused.dropout_of_softmax(
          logits, self.dropout.next_seed(), self.dropout.rate
        ),
        x.dtype,
      )
    else:
      softmax = keras.ops.softmax(logits, axis=-1)
      probs = self.dropout(keras.ops.cast(softmax, x.dtype), training=training)
    context = _heads_transpose(keras.ops.matmul(probs, v))
    context = keras.ops.reshape(context, (-1, self.num_heads * self.head_size))
    if rows is not None:
      context = tf.gather_nd(context, rows)
    return (context, softmax) if return_probs else context

  @staticmethod
  def _logits(scores, attention_adder, scale, float32):
    """scores * scale + adder, the softmax's input: float32 unless the
    softmax may take bfloat16.

    oneDNN's bfloat16 softmax computes in float32 and rounds once, the
    values of casting around a float32 softmax (tested) without two casts
    of [B, A, S, S] (+6% at seq 384 predicting). Training without attention
    dropout (or returning the probabilities) keeps float32 scores:
    TensorFlow's bfloat16 softmax gradient rounds after each op (with
    dropout, `xla_fused.dropout_of_softmax` differentiates in float32). A
    scale other than a power of two applies in float32 (a power of two is
    exact in bfloat16). Keras casts float call arguments to the compute
    dtype; -10000 stays a large negative.
    """
    if float32 or not _power_of_two(scale) or scores.dtype != tf.bfloat16:
      scores = keras.ops.cast(scores, "float32")
    if scale != 1.0:
      scores = scores * scale
    return scores + keras.ops.cast(attention_adder, scores.dtype)

  def tf1_variables(self, prefix):
    names = {}
    for name, layer in (
      ("query", self.query),
      ("key", self.key),
      ("value", self.value),
    ):
      names.update(layer_utils.dense_variables(prefix + "/" + name, layer))
    return names
