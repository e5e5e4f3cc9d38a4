"""TF Hub exports (--task=tfhub_preprocess / tfhub_encoder) against what TF
Model Garden's export_tfhub wrote for the same checkpoint (shared golden
set), used from a process where only tensorflow + tensorflow_text load."""

import os
import subprocess
import sys

import numpy as np
import pytest

from tests.conftest import REPO
from tests.export import standalone

pytestmark = pytest.mark.process  # starts programs

GOLDEN = REPO.parent / "shared" / "golden"
TFHUB = GOLDEN / "tfhub"
CKPT_A = GOLDEN / "encoder" / "ckpt_a" / "bert_model.ckpt"
VOCAB = GOLDEN / "encoder" / "vocab_small.txt"

# Runs in a fresh `python -I` without bert_tf; prints one JSON line.
_CHILD_PRELUDE = (
  standalone.WITHOUT_BERT_TF
  + r"""
import json, sys
import numpy as np
import tensorflow as tf
import tensorflow_text  # the preprocessors' ops
"""
)

# Our preprocessor + encoder on the golden texts, and Model Garden's own
# preprocessor's `tokenize` for comparison.
_GOLDEN_CHILD = (
  _CHILD_PRELUDE
  + r"""
pre, enc, golden_pre = (tf.saved_model.load(p) for p in sys.argv[1:4])
texts = json.load(open(sys.argv[4]))
a, b = tf.constant(texts["text_a"]), tf.constant(texts["text_b"])
result = {"tokenize": pre.tokenize(a).to_list(),
          "golden_tokenize": golden_pre.tokenize(a).to_list(),
          "pack_default_length": pre.bert_pack_inputs(
              [pre.tokenize(a)])["input_word_ids"].shape.as_list(),
          "pack_flat_segments": pre.bert_pack_inputs(
              [pre.tokenize(a).merge_dims(1, 2)],
              seq_length=64)["input_word_ids"].numpy().tolist()}
inputs = {"single": pre(a),
          "pair": pre.bert_pack_inputs([pre.tokenize(a), pre.tokenize(b)],
                                       seq_length=texts["seq_length"])}
for tag, features in inputs.items():
  out = enc(features, training=False)
  result[tag] = {k: v.numpy().tolist() for k, v in features.items()}
  for k in ("pooled_output", "sequence_output", "default"):
    result[tag][k] = out[k].numpy().tolist()
  for i, layer in enumerate(out["encoder_outputs"]):
    result[tag]["encoder_outputs_%d" % i] = layer.numpy().tolist()
signature = enc.signatures["serving_default"](**inputs["single"])
result["signature_pooled"] = signature["pooled_output"].numpy().tolist()
print(json.dumps(result))
"""
)

# A Keras 3 classifier on the loaded encoder (its variables wrapped, not
# copied; see bert_tf.HubLayer for the layer users get), trained a few steps.
_FINETUNE_CHILD = (
  _CHILD_PRELUDE
  + r"""
import keras
tf.random.set_seed(0)
enc = tf.saved_model.load(sys.argv[1])
original = [v.numpy() for v in enc.trainable_variables]

class Encoder(keras.layers.Layer):
  def __init__(self, module):
    super().__init__()
    self.module = module
    for v in module.trainable_variables:
      name = v.name.split(":")[0].replace("/", "_")
      self._track_variable(keras.Variable(v, name=name))
  def call(self, inputs, training=False):
    return self.module(inputs, training=training)["pooled_output"]

inputs = {n: keras.Input((None,), dtype="int32", name=n)
          for n in ("input_word_ids", "input_mask", "input_type_ids")}
logits = keras.layers.Dense(2)(Encoder(enc)(inputs))
model = keras.Model(inputs, logits)
model.compile(keras.optimizers.Adam(1e-3),
              keras.losses.SparseCategoricalCrossentropy(from_logits=True))
rng = np.random.default_rng(0)
ids = rng.integers(1000, 2000, (16, 12)).astype("int32")
labels = (ids[:, 1] % 2).astype("int32")
x = {"input_word_ids": ids, "input_mask": np.ones_like(ids),
     "input_type_ids": np.zeros_like(ids)}
with tf.GradientTape() as tape:
  loss = tf.reduce_sum(enc(x, training=True)["pooled_output"] ** 2)
grads = tape.gradient(loss, enc.trainable_variables)
before = model.evaluate(x, labels, verbose=0)
model.fit(x, labels, epochs=8, batch_size=16, verbose=0)
after = model.evaluate(x, labels, verbose=0)
changed = sum(not np.array_equal(o, v.numpy())
              for o, v in zip(original, enc.trainable_variables))
print(json.dumps({"before": before, "after": after, "changed": changed,
                  "trainable": len(enc.trainable_variables),
                  "no_gradient": sum(g is None for g in grads),
                  "keras_trainable": len(model.trainable_weights)}))
"""
)

_MLM_CHILD = (
  _CHILD_PRELUDE
  + r"""
enc = tf.saved_model.load(sys.argv[1])
inputs = dict(np.load(sys.argv[2]))
positions = np.tile(np.arange(inputs["input_ids"].shape[1]),
                    (inputs["input_ids"].shape[0], 1)).astype("int32")
out = enc.mlm({"input_word_ids": inputs["input_ids"],
               "input_mask": inputs["input_mask"],
               "input_type_ids": inputs["segment_ids"],
               "masked_lm_positions": positions}, training=False)
print(json.dumps({"mlm_logits": out["mlm_logits"].numpy().tolist(),
                  "pooled_output": out["pooled_output"].numpy().tolist()}))
"""
)


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
  tmp = tmp_path_factory.mktemp("tfhub")
  pre = standalone.export(
    tmp,
    "preprocess",
    "--task=tfhub_preprocess",
    "--vocab_file=%s" % VOCAB,
    "--do_lower_case=True",
    "--max_seq_length=64",
  )
  enc = standalone.export(
    tmp,
    "encoder",
    "--task=tfhub_encoder",
    "--checkpoint=%s" % CKPT_A,
    "--vocab_file=%s" % VOCAB,
    "--do_lower_case=True",
  )
  return pre, enc


@pytest.mark.slow  # two exports + a TF process: ~1-2 min
def test_same_ids_and_outputs_as_model_gardens_export(exports):
  pre, enc = exports
  got = standalone.run_child(
    TFHUB, _GOLDEN_CHILD, pre, enc, TFHUB / "preprocess", TFHUB / "texts.json"
  )
  expected = np.load(TFHUB / "expected.npz")
  assert got["tokenize"] == got["golden_tokenize"]  # [batch, words, pieces]
  assert got["pack_default_length"] == [6, 64]
  assert got["pack_flat_segments"] == got["single"]["input_word_ids"]
  for tag in ("single", "pair"):
    for key in ("input_word_ids", "input_mask", "input_type_ids"):
      np.testing.assert_array_equal(
        got[tag][key], expected[tag + "/" + key], err_msg=tag + "/" + key
      )
    keys = [
      "pooled_output",
      "sequence_output",
      "encoder_outputs_0",
      "encoder_outputs_1",
    ]
    for key in keys:
      np.testing.assert_allclose(
        got[tag][key],
        expected[tag + "/" + key],
        atol=1e-5,
        rtol=0,
        err_msg=tag + "/" + key,
      )
    assert got[tag]["default"] == got[tag]["pooled_output"]
  np.testing.assert_allclose(
    got["signature_pooled"], got["single"]["pooled_output"], atol=1e-6
  )


@pytest.mark.slow  # two exports + a TF process: ~1-2 min
def test_encoder_fine_tunes_with_keras_3(exports):
  got = standalone.run_child(TFHUB, _FINETUNE_CHILD, exports[1])
  assert got["trainable"] == 39  # 16 per layer x 2 + 5 embeddings + pooler
  assert got["no_gradient"] == 0
  assert got["keras_trainable"] == 39 + 2
  assert got["changed"] == 39  # the SavedModel's own variables moved
  assert got["after"] < 0.5 * got["before"], got


@pytest.mark.slow  # two exports + a TF process: ~1-2 min
def test_mlm_matches_the_originals_masked_lm(exports):
  got = standalone.run_child(
    TFHUB, _MLM_CHILD, exports[1], GOLDEN / "encoder" / "inputs.npz"
  )
  expected = np.load(GOLDEN / "encoder" / "expected_a.npz")
  # log-probabilities: the original's masked-LM output at every position.
  np.testing.assert_allclose(
    got["mlm_logits"], expected["mlm_log_probs"], atol=2e-5, rtol=0
  )
  np.testing.assert_allclose(
    got["pooled_output"], expected["pooled_output"], atol=1e-5, rtol=0
  )


@pytest.mark.parametrize(
  "args, message",
  [
    (
      [
        "--task=tfhub_preprocess",
        "--vocab_file=%s" % VOCAB,
        "--checkpoint=%s" % CKPT_A,
      ],
      "ERROR: --checkpoint is not an option of --task=tfhub_preprocess",
    ),
    (
      ["--task=tfhub_preprocess"],
      "ERROR: --vocab_file (or --spm_model_file) is required",
    ),
    (
      [
        "--task=tfhub_preprocess",
        "--vocab_file=%s" % VOCAB,
        "--spm_model_file=%s" % VOCAB,
      ],
      "ERROR: --spm_model_file=%s and --vocab_file=%s: give one (a "
      "SentencePiece model replaces the vocabulary)" % (VOCAB, VOCAB),
    ),
    (
      ["--task=tfhub_preprocess", "--spm_model_file=%s" % VOCAB],
      "ERROR: --spm_model_file=%s: not a SentencePiece model" % VOCAB,
    ),
    (
      [
        "--task=classifier",
        "--vocab_file=%s" % VOCAB,
        "--spm_model_file=%s" % VOCAB,
      ],
      "ERROR: --spm_model_file is not an option of --task=classifier",
    ),
    (
      ["--task=tfhub_encoder", "--vocab_file=%s" % VOCAB],
      "ERROR: --checkpoint is required",
    ),
    (
      [
        "--task=tfhub_encoder",
        "--checkpoint=%s" % CKPT_A,
        "--vocab_file=%s" % VOCAB,
        "--labels=a,b",
      ],
      "ERROR: --labels is not an option of --task=tfhub_encoder",
    ),
  ],
)
def test_bad_flags_end_in_one_line(tmp_path, args, message):
  result = subprocess.run(
    [
      sys.executable,
      "-m",
      "bert_tf.export_saved_model",
      "--export_dir=%s" % (tmp_path / "out"),
    ]
    + args,
    cwd=REPO,
    capture_output=True,
    text=True,
    timeout=300,
    check=False,
    env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"),
  )
  assert result.returncode == 1
  assert result.stderr.strip().splitlines()[-1].startswith(message)
  assert "Traceback" not in result.stderr
  assert not (tmp_path / "out").exists()
