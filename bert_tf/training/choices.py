"""The engine's named choices, TensorFlow-free so that flags can list them
(and `--help` answer) before TensorFlow is imported."""

# Keras mixed-precision policies `--dtype` takes.
DTYPES = ("float32", "mixed_float16", "mixed_bfloat16")
# `--optimizer`: the original AdamWeightDecay, or Keras LAMB.
OPTIMIZER_TYPES = ("adamw", "lamb")
# `--best_mode`: whether a higher or lower `--best_metric` is better.
BEST_MODES = ("max", "min")
