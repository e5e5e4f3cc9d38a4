"""`export_saved_model --dtype=bfloat16`: the SavedModel's matmuls run in
bfloat16, its outputs are float32 and within bfloat16 rounding of the float32
export's (tiny original checkpoint ckpt_a)."""

import json

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_text  # noqa: F401  pylint: disable=unused-import

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


def test_bfloat16_encoder_export(tmp_path):
  fp32 = export(tmp_path, "fp32", "--task=encoder", *ARGS)
  bf16 = export(tmp_path, "bf16", "--task=encoder", "--dtype=bfloat16", *ARGS)
  config = json.loads(
    (bf16 / "assets.extra" / "export_config.json").read_text()
  )
  assert config["dtype"] == "mixed_bfloat16"
  assert "bfloat16" in _matmul_dtypes(bf16)
  assert _matmul_dtypes(fp32) == {"float32"}
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
