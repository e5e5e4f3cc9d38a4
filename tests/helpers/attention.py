"""Attention maps for the page and plot tests: synthetic softmax maps with
known values, their .npz as extract_features.py writes it, and a "fine-tuned"
copy of fixture checkpoint ckpt_a whose layer 0 (and embeddings) stayed
frozen: only layer 1's query/key weights moved.

Example:
    maps = softmax_maps(PAIR_TOKENS, layers=[0, 1], heads=3)
    write_npz(path, maps)
    prefix = frozen_below_layer_1(tmp_path)
"""

import numpy as np

from bert_tf.attention import maps as maps_lib

# [CLS] A [SEP] B [SEP] with a word in two pieces ("cat ##s").
PAIR_TOKENS = ["[CLS]", "the", "cat", "##s", "[SEP]", "sat", "[SEP]"]


def softmax_rows(shape, seed=0, sharpness=3.0):
  """float32 softmax rows over the last axis: peaked enough that some
  weights fall below the page's 0.01 line threshold."""
  logits = np.random.default_rng(seed).normal(size=shape) * sharpness
  rows = np.exp(logits - logits.max(-1, keepdims=True))
  return (rows / rows.sum(-1, keepdims=True)).astype(np.float32)


def softmax_maps(tokens, layers, heads, inputs=1, seed=0, source="synthetic"):
  """An AttentionMaps of `inputs` copies of `tokens` with random rows."""
  size = len(tokens)
  return maps_lib.AttentionMaps(
    list(layers),
    [
      maps_lib.Example(
        "line %d" % n,
        list(tokens),
        maps_lib.segments_of(tokens),
        softmax_rows((len(layers), heads, size, size), seed + n),
      )
      for n in range(inputs)
    ],
    source,
  )


def write_npz(path, maps, **extra):
  """`maps` as extract_features.py --output_attentions stores them, with
  `extra` arrays added or replacing them (for damaged files)."""
  arrays = {"layers": np.array(maps.layers)}
  for n, example in enumerate(maps.examples):
    arrays["line_%d_tokens" % n] = np.array(example.tokens)
    arrays["line_%d_attentions" % n] = example.attentions
  arrays.update(extra)
  np.savez(path, **arrays)
  return str(path)


def frozen_below_layer_1(folder):
  """ckpt_a with layer 1's query and key kernels changed: what fine-tuning
  with --num_frozen_layers=1 leaves (embeddings and layer 0 as loaded)."""
  # pylint: disable=g-import-not-at-top
  from bert_tf.checkpoints import checkpoint_io
  from tests.helpers.checkpoints import load_golden

  _, encoder, _, _ = load_golden("ckpt_a")
  names = encoder.tf1_variables()
  noise = np.random.default_rng(1)
  for part in ("query", "key"):
    kernel = names["bert/encoder/layer_1/attention/self/%s/kernel" % part]
    kernel.assign(kernel + noise.normal(0, 0.3, kernel.shape))
  prefix = str(folder / "bert_model.ckpt")
  checkpoint_io.save_tf1_checkpoint(prefix, names)
  return prefix
