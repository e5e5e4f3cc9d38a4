"""bert_tf.HubLayer: TF Hub-format BERTs (our exports of ckpt_a and TF Model
Garden's in the shared golden set) fine-tuned in Keras 3 by the code block
of docs/tfhub.md, saved, reloaded and re-exported; and what plain
keras.layers.TFSMLayer cannot do with the same folders."""

import json
import os
import re
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf.export import get_exporter
from bert_tf.io_utils import InputError
from bert_tf.modeling.bert_config import BertConfig
from bert_tf.modeling.hub_layer import HubLayer
from bert_tf.tokenizers.sentencepiece_tokenizer import SentencePieceTokenizer
from tests.conftest import REPO
from tests.export import standalone
from tests.helpers import offset_texts

pytestmark = pytest.mark.process  # exports, fits and serving processes

GOLDEN = REPO.parent / "shared" / "golden"
TFHUB = GOLDEN / "tfhub"
CKPT_A = GOLDEN / "encoder" / "ckpt_a"
VOCAB = GOLDEN / "encoder" / "vocab_small.txt"
DOCS = REPO / "docs" / "tfhub.md"
_WORDS = (
  "the quick brown fox jumps over a lazy dog hello world it was good".split()
)

# Serves the Keras export in a fresh process without bert_tf; prints logits.
_SERVE_CHILD = (
  standalone.WITHOUT_BERT_TF
  + r"""
import json
import tensorflow as tf
import tensorflow_text  # the preprocessor's ops
served = tf.saved_model.load(sys.argv[1])
texts = tf.constant(json.load(sys.stdin))
print(json.dumps(served.serve(texts).numpy().tolist()))
"""
)


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
  """{source: (preprocessor folder, encoder folder)}."""
  tmp = tmp_path_factory.mktemp("hub")
  config = BertConfig.from_json_file(str(CKPT_A / "bert_config.json"))
  encoder = get_exporter("tfhub_encoder")(config, str(VOCAB), True, None)
  encoder.restore(str(CKPT_A / "bert_model.ckpt"))
  encoder.save(str(tmp / "encoder"))
  preprocess = get_exporter("tfhub_preprocess")(None, str(VOCAB), True, 64)
  preprocess.save(str(tmp / "preprocess"))
  return {
    "ours": (tmp / "preprocess", tmp / "encoder"),
    "model_garden": (TFHUB / "preprocess", TFHUB / "encoder"),
  }


def docs_code():
  """The Python block docs/tfhub.md says this test runs."""
  page = DOCS.read_text().split("tests/export/test_hub_layer.py runs", 1)[1]
  return re.search(r"```python\n(.*?)```", page, re.S).group(1)


def training_data():
  """128 texts (2 epochs of 32: 8 steps) and whether each has "fox"."""
  rng = np.random.default_rng(0)
  texts = [" ".join(rng.choice(_WORDS, 6)) for _ in range(128)]
  labels = [int("fox" in t.split()) for t in texts]
  return tf.constant(texts), tf.constant(labels)


def serve(export_dir, texts):
  env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
  result = subprocess.run(
    [sys.executable, "-I", "-c", _SERVE_CHILD, str(export_dir)],
    input=json.dumps([t.decode() for t in texts.numpy()]),
    capture_output=True,
    text=True,
    cwd=str(export_dir.parent),
    env=dict(env, TF_CPP_MIN_LOG_LEVEL="2"),
    timeout=300,
    check=False,
  )
  assert result.returncode == 0, result.stderr[-3000:]
  return np.array(json.loads(result.stdout.splitlines()[-1]))


@pytest.mark.slow  # a fit, a .keras round trip and a serving process: ~25 s
@pytest.mark.parametrize("optimizer", ["AdamW", "Adam"])
@pytest.mark.parametrize("source", ["ours", "model_garden"])
def test_docs_classifier_fits_reloads_and_serves(
  folders, source, optimizer, tmp_path, monkeypatch
):
  preprocess_dir, encoder_dir = folders[source]
  code = docs_code()
  code = code.replace("/tmp/bert_preprocess", str(preprocess_dir))
  code = code.replace("/tmp/bert_encoder", str(encoder_dir))
  if optimizer == "Adam":
    code = code.replace("AdamW(", "Adam(")
  monkeypatch.chdir(tmp_path)
  keras.utils.set_random_seed(0)
  texts, labels = training_data()
  scope = {"texts": texts, "labels": labels}
  exec(compile(code, str(DOCS), "exec"), scope)  # pylint: disable=exec-used
  model, encoder = scope["model"], scope["encoder"]

  assert type(model.optimizer).__name__ == optimizer
  assert int(model.optimizer.iterations) == 8
  assert len(scope["history"].history["loss"]) == 2  # epochs
  original = HubLayer(encoder_dir, trainable=True).trainable_weights
  tuned = encoder.trainable_weights
  assert len(tuned) == 39  # 16 per layer x 2 + 5 embeddings + the pooler
  assert [w.path for w in tuned] == [w.path for w in original]
  assert all(":" not in w.path for w in tuned)
  moved = [not np.array_equal(a, b) for a, b in zip(tuned, original)]
  assert sum(moved) == 39
  # Gradients, not AdamW's weight decay alone, move them.
  with tf.GradientTape() as tape:
    loss = tf.reduce_sum(model(texts[:4], training=True) ** 2)
  assert all(g is not None for g in tape.gradient(loss, tuned))

  # Every weight was fitted, so equal logits mean the .keras file's weights
  # (the folders hold the original ones).
  logits = model.predict(texts, verbose=0)
  np.testing.assert_array_equal(
    scope["reloaded"].predict(texts, verbose=0), logits
  )
  served = serve(tmp_path / "classifier_savedmodel", texts)
  np.testing.assert_allclose(served, logits, atol=1e-5, rtol=0)


@pytest.mark.parametrize("source", ["ours", "model_garden"])
def test_golden_values_training_and_config(folders, source):
  preprocess_dir, encoder_dir = folders[source]
  texts = json.loads((TFHUB / "texts.json").read_text())
  expected = np.load(TFHUB / "expected.npz")
  preprocess = HubLayer(preprocess_dir)
  pairs = HubLayer(preprocess_dir, seq_length=texts["seq_length"])
  encoder = HubLayer(encoder_dir)
  a, b = tf.constant(texts["text_a"]), tf.constant(texts["text_b"])
  for tag, inputs in (("single", preprocess(a)), ("pair", pairs([a, b]))):
    for key, value in inputs.items():
      np.testing.assert_array_equal(value, expected[tag + "/" + key])
    outputs = encoder(inputs)
    outputs.update(
      ("encoder_outputs_%d" % i, x)
      for i, x in enumerate(outputs.pop("encoder_outputs"))
    )
    outputs["pooled_output"] = outputs.pop("default")
    for key, value in outputs.items():
      np.testing.assert_allclose(
        value, expected[tag + "/" + key], atol=1e-5, rtol=0, err_msg=key
      )

  # Frozen (the default) runs in inference mode; trainable gets dropout.
  pooled = encoder(inputs)["pooled_output"]
  np.testing.assert_array_equal(
    encoder(inputs, training=True)["pooled_output"], pooled
  )
  assert not encoder.trainable_weights
  encoder.trainable = True
  assert len(encoder.trainable_weights) == 39
  assert not np.allclose(
    encoder(inputs, training=True)["pooled_output"], pooled
  )

  config = encoder.get_config()
  assert config["handle"] == os.path.abspath(encoder_dir)
  assert config["trainable"] and config["output_key"] is None
  config["output_key"] = "pooled_output"
  np.testing.assert_array_equal(HubLayer.from_config(config)(inputs), pooled)


def _encoder_inputs():
  ids = np.random.default_rng(0).integers(5, 3000, (8, 12)).astype("int32")
  return {
    "input_word_ids": ids,
    "input_mask": np.ones_like(ids),
    "input_type_ids": np.zeros_like(ids),
  }


def _fit(layer, optimizer):
  names = ("input_word_ids", "input_mask", "input_type_ids")
  inputs = {n: keras.Input((None,), dtype="int32", name=n) for n in names}
  logits = keras.layers.Dense(2)(layer(inputs)["pooled_output"])
  model = keras.Model(inputs, logits)
  # From logits: on raw Dense outputs the default loss clips what it takes
  # for probabilities, and a clipped target class sends back no gradient.
  model.compile(
    optimizer, keras.losses.SparseCategoricalCrossentropy(from_logits=True)
  )
  x = _encoder_inputs()
  model.fit(x, x["input_word_ids"][:, 0] % 2, epochs=1, verbose=0)


@pytest.mark.parametrize("source", ["ours", "model_garden"])
def test_plain_tfsmlayer_infers_but_cannot_fit_with_adam(folders, source):
  """The docs' table for keras.layers.TFSMLayer; HubLayer is the way out."""
  encoder_dir = str(folders[source][1])
  signature = keras.layers.TFSMLayer(
    encoder_dir, call_endpoint="serving_default"
  )
  with pytest.raises(TypeError, match=r"takes 0 positional arguments, got 1"):
    _fit(signature, keras.optimizers.SGD())

  plain = keras.layers.TFSMLayer(encoder_dir, call_endpoint="__call__")
  x = _encoder_inputs()
  pooled = plain(x)["pooled_output"]
  np.testing.assert_array_equal(
    pooled, HubLayer(encoder_dir)(x)["pooled_output"]
  )
  # `training` does not reach the SavedModel: no dropout.
  np.testing.assert_array_equal(
    plain(x, training=True)["pooled_output"], pooled
  )
  first = {
    "ours": "embeddings_word_embeddings:0",
    "model_garden": "word_embeddings_embeddings:0",
  }[source]
  assert plain.trainable_weights[0].path == first
  for optimizer in (keras.optimizers.Adam(), keras.optimizers.AdamW()):
    with pytest.raises(
      ValueError, match="'%s_momentum' is not a valid scope name" % first
    ):
      _fit(plain, optimizer)
  _fit(plain, keras.optimizers.SGD())  # no slots: it fits
  assert not np.array_equal(plain(x)["pooled_output"], pooled)


def test_tfsmlayer_on_keras_own_export_fails_the_same(tmp_path):
  """The `:0` comes from TensorFlow's loading, not from an exporter."""
  model = keras.Sequential(
    [keras.Input((4,)), keras.layers.Dense(1, name="dense")],
    name="sequential",
  )
  model.export(str(tmp_path / "dense"), verbose=False)
  inputs = keras.Input((4,))
  reloaded = keras.Model(
    inputs, keras.layers.TFSMLayer(str(tmp_path / "dense"))(inputs)
  )
  # A .keras file holding a TFSMLayer reloads only with safe_mode=False.
  reloaded.save(str(tmp_path / "m.keras"))
  with pytest.raises(ValueError, match="deserialization of a `TFSMLayer`"):
    keras.models.load_model(str(tmp_path / "m.keras"))
  reloaded.compile(keras.optimizers.Adam(), "mse")
  with pytest.raises(
    ValueError, match=r"'sequential_dense_kernel:0_momentum' is not"
  ):
    reloaded.fit(np.ones((2, 4)), np.ones((2, 1)), verbose=0)


def _save_module(path, function):
  module = tf.Module()
  module.__call__ = tf.function(
    function, input_signature=[tf.TensorSpec([None], tf.string)]
  )
  tf.saved_model.save(module, str(path))


def test_refuses_urls_folders_and_graphs_that_touch_files(tmp_path):
  with pytest.raises(
    InputError, match=r"^HubLayer: https://www.kaggle.com/m is a URL: download"
  ):
    HubLayer("https://www.kaggle.com/m")
  with pytest.raises(
    InputError, match=r"^HubLayer: .*/empty: no saved_model.pb"
  ):
    HubLayer(tmp_path / "empty")
  module = tf.Module()
  module.v = tf.Variable(1.0)
  tf.saved_model.save(module, str(tmp_path / "plain"))
  with pytest.raises(
    InputError, match=r"plain: the SavedModel's root is not callable"
  ):
    HubLayer(tmp_path / "plain")

  _save_module(tmp_path / "m", tf.strings.lower)
  with pytest.raises(InputError, match=r"output_key='x': \S+ has no such"):
    HubLayer(tmp_path / "m", output_key="x")
  with pytest.raises(InputError, match=r"seq_length=64: a preprocessor's"):
    HubLayer(tmp_path / "m", seq_length=64)

  # A .keras model over a harmless folder, whose folder is then replaced by
  # one that would write a file: reloading (safe mode) refuses it unrun.
  text = keras.Input((), dtype="string")
  keras.Model(text, HubLayer(tmp_path / "m")(text)).save(
    str(tmp_path / "m.keras")
  )
  target = tmp_path / "written"
  _save_module(
    tmp_path / "hostile", lambda x: (tf.io.write_file(str(target), "x"), x)[1]
  )
  os.rename(tmp_path / "m", tmp_path / "old")
  os.rename(tmp_path / "hostile", tmp_path / "m")
  refused = r"HubLayer: \S+/m: refused: function \S+ runs op WriteFile "
  with pytest.raises(InputError, match="^" + refused) as e:
    HubLayer(tmp_path / "m")
  assert "\n" not in str(e.value)
  # Keras wraps what from_config raises in its own TypeError.
  with pytest.raises(TypeError, match=refused):
    keras.models.load_model(str(tmp_path / "m.keras"))
  assert not target.exists()


@pytest.mark.slow  # a SentencePiece export and two loads: ~20 s
def test_sentencepiece_preprocessor_loads(tmp_path):
  """Our --spm_model_file preprocessor in HubLayer: the Python
  SentencePiece tokenizer's ids, single texts and pairs."""
  model_file = offset_texts.sentencepiece_model(tmp_path)
  exporter = get_exporter("tfhub_preprocess")(
    None, None, True, 64, {"spm_model_file": model_file}
  )
  exporter.save(str(tmp_path / "spm_preprocess"))
  python = SentencePieceTokenizer(model_file, do_lower_case=True)
  texts = json.loads((TFHUB / "texts.json").read_text())
  a, b = texts["text_a"][:5], texts["text_b"][:5]  # the short ones
  pieces = lambda t: python.convert_tokens_to_ids(python.tokenize(t))  # noqa: E731
  cls_id, sep_id = python.vocab["[CLS]"], python.vocab["[SEP]"]
  single = HubLayer(tmp_path / "spm_preprocess")(tf.constant(a))
  pairs = HubLayer(tmp_path / "spm_preprocess", seq_length=60)(
    [tf.constant(a), tf.constant(b)]
  )
  for i, (x, y) in enumerate(zip(a, b)):
    ids = [cls_id] + pieces(x) + [sep_id]
    assert single["input_word_ids"][i].numpy().tolist() == ids + [0] * (
      64 - len(ids)
    )
    ids += pieces(y) + [sep_id]
    assert len(ids) <= 60  # untrimmed
    assert pairs["input_word_ids"][i].numpy().tolist() == ids + [0] * (
      60 - len(ids)
    )
