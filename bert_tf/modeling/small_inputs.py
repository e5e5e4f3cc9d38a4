"""Predicting on few tokens: kernels without a fixed cost per call.

A single request (a sentence pair, ~50 tokens) pays oneDNN's fixed cost per
call more than its work: `_MklLayerNorm` reorders gamma and beta and hands
work to the thread pool on every call, and so does each head transpose.
Under `scope()`, bfloat16 LayerNorms take ten element-wise ops
(`layer_norm.float32_layer_norm`, float32 math rounded once) and the head
transposes move int16 (Eigen's transpose: the same bits). A bfloat16 model
branches once on the batch's size (`tasks.base.TaskModel.encode`), so large
batches keep the kernels, which win there. Float32 keeps them all: its
LayerNorm kernel's bits are its predictions', and int32 transposes made a
single request 5-8% slower.

Per call at MiniLM's H = 384, bfloat16: a LayerNorm on [64, 384] 61 against
80 us, on [128, 384] 105 against 91 us (benchmarks/README.md, round 13).

Example:
    with small_inputs.scope():
      outputs = encoder(features)  # traced with the small-input forms
"""

import contextlib

# Values of the encoder's input ids times hidden_size: ~85 tokens at H=384.
MAX_SIZE = 32768
_active = [False]


@contextlib.contextmanager
def scope():
  """Layers traced inside take their small-input forms."""
  _active[0] = True
  try:
    yield
  finally:
    _active[0] = False


def active():
  return _active[0]
