"""`export_saved_model --dtype=bfloat16`: the SavedModel's matmuls run in
bfloat16 on weights stored in bfloat16, its outputs are float32 and within
bfloat16 rounding of the float32 export's (tiny original checkpoint ckpt_a);
the exporter's own model keeps its float32 weights."""

import json

import keras
import numpy as np
import pytest
import tensorflow as tf
import tensorflow_text  # noqa: F401  pylint: disable=unused-import

from bert_tf.export.encoder import EncoderExporter
from bert_tf.modeling.bert_config import BertConfig
from bert_tf.training import distribution
from tests.conftest import FIXTURES
from tests.export.standalone import export
from tests.export.standalone import serve
from tests.helpers.export_cases import ARGS
from tests.helpers.export_cases import PAIRS

pytestmark = pytest.mark.process  # starts programs


def _matmul_dtypes(export_dir):
  """The T of every MatMul/BatchMatMul in the SavedModel's functions
  (tensorflow_text registers the tokenizer ops for loading)."""
  loaded = tf.saved_model.load(str(export_dir))
  graph = loaded.signatures["serving_default"].graph.as_graph_def()
  nodes = list(graph.node)
  for function in graph.library.function:
    nodes.extend(function.node_def)
  return {
    tf.dtypes.as_dtype(n.attr["T"].type).name
    for n in nodes
    if n.op in ("MatMul", "BatchMatMulV2", "BatchMatMulV3")
  }


def _weight_dtypes(export_dir):
  """{dtype name: count} of the SavedModel's stored weights."""
  reader = tf.train.load_checkpoint(str(export_dir / "variables" / "variables"))
  dtypes = {}
  for name, dtype in reader.get_variable_to_dtype_map().items():
    if "/.ATTRIBUTES/VARIABLE_VALUE" in name:
      dtypes[dtype.name] = dtypes.get(dtype.name, 0) + 1
  return dtypes


def test_bfloat16_encoder_export(tmp_path):
  fp32 = export(tmp_path, "fp32", "--task=encoder", *ARGS)
  bf16 = export(tmp_path, "bf16", "--task=encoder", "--dtype=bfloat16", *ARGS)
  config = json.loads(
    (bf16 / "assets.extra" / "export_config.json").read_text()
  )
  assert config["dtype"] == "mixed_bfloat16"
  assert "bfloat16" in _matmul_dtypes(bf16)
  assert _matmul_dtypes(fp32) == {"float32"}
  fp32_weights = _weight_dtypes(fp32)
  assert list(fp32_weights) == ["float32"]
  # Kernels, biases, LayerNorm in bfloat16; the three embedding tables not.
  assert _weight_dtypes(bf16) == {
    "bfloat16": fp32_weights["float32"] - 3,
    "float32": 3,
  }
  loaded = tf.saved_model.load(str(bf16))
  outputs = loaded.signatures["serving_default"].structured_outputs
  assert {k: v.dtype for k, v in outputs.items() if v.dtype.is_floating} == {
    k: tf.float32 for k, v in outputs.items() if v.dtype.is_floating
  }
  request = [{"text_a": [a for a, _ in PAIRS], "text_b": [b for _, b in PAIRS]}]
  (want,), (got,) = serve(fp32, request), serve(bf16, request)
  for key in ("sequence_output", "pooled_output", "layer_0"):
    value, expected = np.array(got[key]), np.array(want[key])
    np.testing.assert_allclose(
      value, expected, rtol=0, err_msg=key, atol=0.02 * np.max(np.abs(expected))
    )
    assert not np.array_equal(value, expected), key
  assert got["input_mask"] == want["input_mask"]


def test_save_leaves_the_exporters_model_alone(tmp_path):
  """The API trains the exporter's model: saving a bfloat16 SavedModel of it
  must not swap or cast its weights."""
  config = BertConfig.from_json_file(
    str(FIXTURES / "encoder" / "ckpt_a" / "bert_config.json")
  )
  with distribution.policy_scope("mixed_bfloat16"):
    exporter = EncoderExporter(
      config, str(FIXTURES / "encoder" / "vocab_small.txt"), True, 16
    )
  model = exporter.model
  before = [w.numpy() for w in model.weights]
  exporter.save(str(tmp_path / "sm"))
  assert exporter.model is model
  assert keras.mixed_precision.global_policy().name == "float32"
  assert {w.dtype for w in model.weights} == {"float32"}
  for w, value in zip(model.weights, before):
    np.testing.assert_array_equal(w.numpy(), value)
  assert set(_weight_dtypes(tmp_path / "sm")) == {"bfloat16", "float32"}
