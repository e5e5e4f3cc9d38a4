"""The element-wise work around a transformer block's matmuls, when
training, as one XLA kernel forward and one backward.

Example:
    h = xla_fused.bias_activation(x @ kernel, bias, gelu)      # gelu(x + b)
    y = xla_fused.bias_dropout_add_norm(x @ kernel, bias, seed, residual,
                                        gamma, beta, epsilon=1e-12, rate=0.1)
    # LayerNorm(dropout(x + b) + residual), seed: int32 [2]
    p = xla_fused.dropout_of_softmax(scores + adder, seed, rate=0.1)

Why: on CPU TensorFlow runs each of these as ~10 separate passes over the
activations (bias add and its gradient, GELU, dropout's scaling and
select, the residual, LayerNorm and their gradients). XLA fuses each
direction into one pass: a [1024, 3072] GELU forward + backward went from
14 to 5 ms in bfloat16 and 18 to 5.5 ms in float32 (2 cores), about 5% of
a BERT-Base training step. The backward kernel recomputes the forward from
the saved inputs (a few flops per element, no extra memory) and
differentiates it with the tape inside the compiled function, so no
derivative is written by hand (but the softmax's: see `dropout_of_softmax`).
Dropout masks are hashed from a seed inside the kernels, never stored.
Only training uses these: predicting keeps the plain ops, which oneDNN
fuses into its MatMul (+ BiasAdd + GELU), and exports stay free of XLA.

Half-precision inputs are computed in float32 inside the kernel and
rounded once at the end (TF's bfloat16 element-wise ops round after every
op); float32 results differ from the plain ops in the last bits (XLA's tanh
and its fused multiply-adds).
"""

import functools

import keras
import tensorflow as tf

from bert_tf.modeling import layer_utils


def fused(fn):
  """`fn(*tensors) -> tensor` with a forward and a backward XLA kernel.

  Non-float inputs (a seed) get no gradient; variables may be passed.
  """
  forward = tf.function(fn, jit_compile=True, autograph=False)

  @tf.function(jit_compile=True, autograph=False)
  def backward(args, dy):
    floats = [a for a in args if a.dtype.is_floating]
    with tf.GradientTape() as tape:
      tape.watch(floats)
      y = fn(*args)
    grads = iter(tape.gradient(y, floats, output_gradients=dy))
    return [next(grads) if a.dtype.is_floating else None for a in args]

  @tf.custom_gradient
  def op(*args):
    return forward(*args), lambda dy: backward(list(args), dy)

  # Variables are read (and autocast) outside: the gradient then reaches
  # them through their reads.
  return lambda *args: op(*[tf.convert_to_tensor(a) for a in args])


def _wide(x):
  """x in at least float32."""
  return tf.cast(x, keras.backend.result_type(x.dtype, "float32"))


@functools.cache  # one compiled kernel per function, shared by the layers
def _bias_activation(fn):
  def bias_activation(x, bias):
    wide = _wide(x)
    y = wide + tf.cast(bias, wide.dtype)
    return tf.cast(y if fn is None else fn(y), x.dtype)

  return fused(bias_activation)


def bias_activation(x, bias, fn):
  """fn(x + bias) (fn None: identity), computed in at least float32."""
  return _bias_activation(fn)(x, bias)


@functools.cache
def _bias_dropout_add_norm(epsilon, rate):
  def bias_dropout_add_norm(x, bias, residual, gamma, beta, *seed):
    wide = _wide(x)
    y = wide + tf.cast(bias, wide.dtype)
    if seed:
      y = layer_utils.apply_keep(
        y, layer_utils.hashed_keep_mask(tf.shape(y), rate, seed[0]), rate
      )
    y = keras.ops.layer_normalization(
      y + tf.cast(residual, wide.dtype), gamma, beta, epsilon=epsilon
    )
    return tf.cast(y, x.dtype)

  return fused(bias_dropout_add_norm)


def bias_dropout_add_norm(x, bias, seed, residual, gamma, beta, epsilon, rate):
  """LayerNorm(dropout(x + bias) + residual) with gamma/beta; dropout keeps
  `hashed_keep_mask(shape, rate, seed)` (seed None: no dropout), scaled by
  1/(1-rate)."""
  op = _bias_dropout_add_norm(float(epsilon), float(rate))
  extra = [] if seed is None else [seed]
  return op(x, bias, residual, gamma, beta, *extra)


@functools.cache
def _dropout_of_softmax(rate):
  """op(logits, seed) -> dropout(softmax(logits)): the softmax is
  TensorFlow's (oneDNN: one pass; in bfloat16 float32 inside, rounded
  once), which took 9 ms on [8, 12, 384, 384] against 20 ms for XLA's. The
  dropout is an XLA kernel, and so is the gradient, written out from the
  saved probabilities: dz = p * (g - sum(g * p)), g = dropout(dy)."""

  @tf.function(jit_compile=True, autograph=False)
  def forward(probs, seed):
    keep = layer_utils.hashed_keep_mask(tf.shape(probs), rate, seed)
    return tf.cast(
      layer_utils.apply_keep(_wide(probs), keep, rate), probs.dtype
    )

  @tf.function(jit_compile=True, autograph=False)
  def backward(probs, seed, dy):
    keep = layer_utils.hashed_keep_mask(tf.shape(probs), rate, seed)
    p = _wide(probs)
    g = layer_utils.apply_keep(tf.cast(dy, p.dtype), keep, rate)
    return tf.cast(
      p * (g - tf.reduce_sum(g * p, -1, keepdims=True)), probs.dtype
    )

  @tf.custom_gradient
  def op(logits, seed):
    probs = tf.nn.softmax(logits)
    return forward(probs, seed), lambda dy: (backward(probs, seed, dy), None)

  return op


def dropout_of_softmax(logits, seed, rate):
  """dropout(softmax(logits)) over the last axis, in the logits' dtype;
  dropout keeps `hashed_keep_mask(shape, rate, seed)`."""
  return _dropout_of_softmax(float(rate))(logits, seed)
