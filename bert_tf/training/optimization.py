"""The original BERT optimizer, schedule and clipping order, Keras 3 style.

`create_optimizer` returns an optimizer that does everything one original
training step did: global-norm clipping to 1.0 after the cross-replica sum
(`AllReduceThenClip`), the rate of step `optimizer.iterations`
(`WarmupLinearDecay`) and the `AdamWeightDecay` update. So
`optimizer.apply(grads, variables)` alone reproduces one step of the
original `optimization.create_optimizer`.

* WarmupLinearDecay: linear warmup from 0, then linear decay to 0 counted
  from step 0 (not from the end of warmup), as the original: the rate drops
  at the end of warmup from ~init_lr to init_lr * (1 - W/T).
* AllReduceThenClip: Keras clips each replica's gradients before the
  all-reduce, so 2 replicas would clip half-batch gradients; the original on
  one device clips the whole batch's gradient. The mixin sums first, then
  clips (callers scale each replica's loss by 1/num_replicas).
* AdamWeightDecay: Adam without bias correction, epsilon outside the square
  root, decoupled weight decay (`update += rate * param`) skipped for every
  variable whose path matches an exclusion pattern (`re.search`, as the
  original on TF1 names; our Keras paths keep the TF1 scope names, e.g.
  `bert/encoder/layer_0/output/LayerNorm/gamma`).

Example:
    opt = create_optimizer(5e-5, num_train_steps=1000, num_warmup_steps=100)
    opt.apply(grads, model.trainable_variables)
    WarmupLinearDecay(5e-5, 1000, 100)(100)  # 4.5e-05
"""

import re

import keras
import tensorflow as tf

from bert_tf.io_utils import InputError

OPTIMIZER_TYPES = ("adamw", "lamb")


class WarmupLinearDecay(keras.optimizers.schedules.LearningRateSchedule):
  """lr(t) = init_lr*t/W for t < W, else init_lr*(1 - min(t, T)/T)."""

  def __init__(self, init_lr, num_train_steps, num_warmup_steps):
    self.init_lr = init_lr
    self.num_train_steps = num_train_steps
    self.num_warmup_steps = num_warmup_steps

  def __call__(self, step):
    step = tf.cast(step, tf.float32)
    init_lr = tf.constant(self.init_lr, tf.float32)
    # polynomial_decay(power=1, end=0, cycle=False) of the original.
    done = tf.minimum(step, float(self.num_train_steps)) / float(
      self.num_train_steps
    )
    decayed = init_lr * (1.0 - done)
    if not self.num_warmup_steps:
      return decayed
    warmup = init_lr * (step / float(self.num_warmup_steps))
    return tf.where(step < float(self.num_warmup_steps), warmup, decayed)

  def get_config(self):
    return {
      "init_lr": self.init_lr,
      "num_train_steps": self.num_train_steps,
      "num_warmup_steps": self.num_warmup_steps,
    }


class AllReduceThenClip:
  """Overrides the two Keras hooks that fix the reduce/clip order."""

  def _clip_gradients(self, grads):
    ctx = tf.distribute.get_replica_context()
    if ctx is not None and ctx.num_replicas_in_sync > 1:
      grads = ctx.all_reduce(tf.distribute.ReduceOp.SUM, list(grads))
    return self._clip_reduced(grads)

  def _clip_reduced(self, grads):
    """Clips the summed gradients (Keras' own clipping by default)."""
    return super()._clip_gradients(grads)

  def _all_reduce_sum_gradients(self, grads_and_vars):
    # Already summed in `_clip_gradients`, which every apply path calls.
    return list(grads_and_vars)


DEFAULT_EXCLUDE = ("LayerNorm", "layer_norm", "bias")


def variable_key(variable):
  """The name the exclusion patterns are matched against (Keras path)."""
  return getattr(variable, "path", None) or variable.name


def _adam_weight_decay_update(
  gradient,
  variable,
  m,
  v,
  learning_rate,
  beta_1,
  beta_2,
  epsilon,
  weight_decay_rate,
):
  """One variable's update, op for op as the original `apply_gradients`
  (all float32: the slots and the master weights never leave it).

  Values in, (variable, m, v) out: the caller assigns them.
  """
  m = beta_1 * m + (1.0 - beta_1) * gradient
  v = beta_2 * v + (1.0 - beta_2) * tf.square(gradient)
  update = m / (tf.sqrt(v) + epsilon)
  if weight_decay_rate:
    update += weight_decay_rate * variable
  return variable - learning_rate * update, m, v


def _scaled_update(gradient, clip_scale, variable, m, v, *hyper):
  """The update of the clipped gradient `gradient * clip_scale`."""
  return _adam_weight_decay_update(
    gradient * clip_scale, variable, m, v, *hyper
  )


def _scaled_update_in_place(gradient, clip_scale, variable, m, v, *hyper):
  """`_scaled_update` assigned inside the kernel: XLA then updates the
  buffers in place instead of writing new tensors to copy back."""
  new_variable, new_m, new_v = _scaled_update(
    gradient,
    clip_scale,
    variable.read_value(),
    m.read_value(),
    v.read_value(),
    *hyper,
  )
  m.assign(new_m)
  v.assign(new_v)
  variable.assign(new_variable)


# The same update as one XLA kernel: one pass over gradient, variable and
# slots instead of ~15 full-size ops and the clipped copy of the gradient
# (BERT-Base's 110M parameters: 0.31 s of a 2-core step op by op with an
# XLA clip, 0.13 s in place; see README "Speed"). XLA on CPU contracts
# a*b + c into fused multiply-adds, so values differ from the op-by-op
# update in the last bit (the golden trajectories hold to 1e-5 either way).
_fused_update = tf.function(_scaled_update, jit_compile=True)
_fused_update_in_place = tf.function(_scaled_update_in_place, jit_compile=True)


def _tf_variable(variable):
  """The tf.Variable behind a Keras variable (a tf.Variable as it is)."""
  return variable if isinstance(variable, tf.Variable) else variable.value


def _clip_scale(grads, clip_norm):
  """`tf.clip_by_global_norm`'s factor without the clipped copies. Its
  norm (one L2Loss per tensor, multi-threaded) takes 0.02 s for BERT-Base
  where an XLA-compiled sum of squares took 0.09 s."""
  norm = tf.linalg.global_norm(grads)
  return clip_norm * tf.minimum(1.0 / norm, 1.0 / clip_norm)


class AdamWeightDecay(AllReduceThenClip, keras.optimizers.Optimizer):
  """Adam with decoupled weight decay and no bias correction (BERT's).

  `fused=False` runs the original's ops one by one (bit-exact float32);
  `fused=True` computes only the global-norm clipping factor and applies it
  inside each variable's XLA-compiled update (`_clip_scale`,
  `_fused_update`).
  """

  def __init__(
    self,
    learning_rate=0.001,
    weight_decay_rate=0.01,
    beta_1=0.9,
    beta_2=0.999,
    epsilon=1e-6,
    exclude_from_weight_decay=DEFAULT_EXCLUDE,
    fused=False,
    name="AdamWeightDecay",
    **kwargs,
  ):
    super().__init__(learning_rate=learning_rate, name=name, **kwargs)
    self.weight_decay_rate = weight_decay_rate
    self.beta_1 = beta_1
    self.beta_2 = beta_2
    self.epsilon = epsilon
    self.exclude_patterns = tuple(exclude_from_weight_decay or ())
    self.fused = fused

  def uses_weight_decay(self, variable):
    """True unless a pattern is found in the variable's path."""
    if not self.weight_decay_rate:
      return False
    key = variable_key(variable)
    return not any(re.search(p, key) for p in self.exclude_patterns)

  def build(self, var_list):
    if self.built:
      return
    super().build(var_list)
    self._m, self._v = self.add_optimizer_variables(var_list, ["m", "v"])
    self._decay = [self.uses_weight_decay(v) for v in var_list]

  def _clip_reduced(self, grads):
    if not self.fused:
      return super()._clip_reduced(grads)
    # Fused: the update multiplies each gradient by the clipping factor.
    self._clip_factor = (
      tf.constant(1.0)
      if not self.global_clipnorm
      else (
        _clip_scale(
          [g for g in grads if g is not None], float(self.global_clipnorm)
        )
      )
    )
    return grads

  def update_step(self, gradient, variable, learning_rate):
    index = self._get_variable_index(variable)
    dtype = variable.dtype
    # Dense, as the original: every row of the embedding table moves (its
    # gather gradient arrives as IndexedSlices).
    gradient = tf.cast(tf.convert_to_tensor(gradient), dtype)
    m, v = self._m[index], self._v[index]
    args = (
      tf.cast(learning_rate, dtype),
      self.beta_1,
      self.beta_2,
      self.epsilon,
      self.weight_decay_rate if self._decay[index] else 0.0,
    )
    if self.fused and not tf.distribute.has_strategy():
      _fused_update_in_place(
        gradient,
        self._clip_factor,
        _tf_variable(variable),
        _tf_variable(m),
        _tf_variable(v),
        *args,
      )
      return
    # Under a strategy Keras' assign writes each replica's own copies.
    current = [tf.convert_to_tensor(t) for t in (variable, m, v)]
    if self.fused:
      new = _fused_update(gradient, self._clip_factor, *current, *args)
    else:
      new = _adam_weight_decay_update(gradient, *current, *args)
    for target, value in zip((variable, m, v), new):
      self.assign(target, value)

  def get_config(self):
    config = super().get_config()
    config.update(
      {
        "weight_decay_rate": self.weight_decay_rate,
        "beta_1": self.beta_1,
        "beta_2": self.beta_2,
        "epsilon": self.epsilon,
        "exclude_from_weight_decay": list(self.exclude_patterns),
        "fused": self.fused,
      }
    )
    return config


class _Lamb(AllReduceThenClip, keras.optimizers.Lamb):
  """Core Keras LAMB with the BERT reduce-then-clip order."""


def create_optimizer(
  init_lr,
  num_train_steps,
  num_warmup_steps,
  optimizer_type="adamw",
  weight_decay_rate=0.01,
  clip_norm=1.0,
  fused=True,
):
  """Returns a Keras optimizer with the original's exact update rule.

  Args:
    init_lr: peak learning rate (`--learning_rate`).
    num_train_steps: optimizer updates until the rate reaches 0.
    num_warmup_steps: linear warmup length; 0 disables warmup.
    optimizer_type: "adamw" (original AdamWeightDecay) or "lamb" (Keras
      LAMB, for large-batch pre-training; epsilon 1e-6, same exclusions).
    weight_decay_rate: decoupled weight decay for non-excluded variables.
    clip_norm: global-norm clipping threshold; None disables clipping.
    fused: adamw only: each variable's update as one XLA kernel (faster;
      last-bit differences from the op-by-op original, see
      `AdamWeightDecay`).
  """
  if num_train_steps <= 0:
    raise InputError(
      "num_train_steps must be positive, got %r" % num_train_steps
    )
  schedule = WarmupLinearDecay(init_lr, num_train_steps, num_warmup_steps)
  if optimizer_type == "adamw":
    return AdamWeightDecay(
      learning_rate=schedule,
      weight_decay_rate=weight_decay_rate,
      global_clipnorm=clip_norm,
      fused=fused,
    )
  if optimizer_type == "lamb":
    optimizer = _Lamb(
      learning_rate=schedule,
      epsilon=1e-6,
      weight_decay=weight_decay_rate or None,
      global_clipnorm=clip_norm,
      name="Lamb",
    )
    # Keras matches these against the short name (`gamma`, `beta`, `bias`).
    optimizer.exclude_from_weight_decay(
      var_names=["LayerNorm", "layer_norm", "bias", "gamma", "beta"]
    )
    return optimizer
  raise InputError(
    "--optimizer must be one of %s, got %r"
    % ("|".join(OPTIMIZER_TYPES), optimizer_type)
  )
