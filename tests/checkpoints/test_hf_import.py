"""HuggingFace import: name mapping on a tiny random file (CI) and MiniLM vs
the outputs HF `transformers` computed (a fixture made once, outside the
suite)."""

import json
import os

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.checkpoints import hf_import
from bert_tf.io_utils import InputError
from bert_tf.modeling import pretrained
from bert_tf.modeling.bert_config import BertConfig
from bert_tf.modeling.conversion import convert
from tests.helpers.checkpoints import ENCODER_DIR
from tests.helpers.hf_models import EXPECTED_NAMES
from tests.helpers.hf_models import MINILM
from tests.helpers.hf_models import tiny_hf_model


def test_name_rules():
  for hf_name, expected in EXPECTED_NAMES.items():
    assert hf_import.hf_name_to_tf1(hf_name) == expected, hf_name


def test_tiny_model_round_trips_through_tf1_checkpoint(tmp_path):
  tensors = tiny_hf_model(str(tmp_path / "hf"))
  prefix = convert(str(tmp_path / "hf"), "hf", str(tmp_path / "out"))
  reader = tf.train.load_checkpoint(prefix)
  written = reader.get_variable_to_shape_map()
  used = 0
  for hf_name, value in tensors.items():
    name, transpose = hf_import.hf_name_to_tf1(hf_name)
    if name is None:
      continue
    used += 1
    np.testing.assert_array_equal(
      reader.get_tensor(name), value.T if transpose else value
    )
  assert used == len(written) == len(tensors) - 2
  config = BertConfig.from_json_file(str(tmp_path / "out" / "bert_config.json"))
  assert config.hidden_act == "gelu_exact" and config.num_hidden_layers == 1
  assert (tmp_path / "out" / "vocab.txt").read_text().startswith("tok0\n")


@pytest.mark.parametrize(
  "change, message",
  [
    ({"hidden_act": "silu"}, "silu"),
    ({"layer_norm_eps": 1e-5}, "layer_norm_eps"),
    ({"position_embedding_type": "relative_key"}, "absolute"),
  ],
)
def test_unsupported_hf_configs(tmp_path, change, message):
  tiny_hf_model(str(tmp_path))
  path = tmp_path / "config.json"
  config = json.loads(path.read_text())
  config.update(change)
  path.write_text(json.dumps(config))
  with pytest.raises(InputError, match=message):
    hf_import.read_hf_config(str(tmp_path))


def test_hf_activation_names(tmp_path):
  for hf_act, ours in (
    ("gelu", "gelu_exact"),
    ("gelu_new", "gelu"),
    ("relu", "relu"),
  ):
    tiny_hf_model(str(tmp_path), hidden_act=hf_act)
    assert hf_import.read_hf_config(str(tmp_path)).hidden_act == ours


@pytest.mark.slow
@pytest.mark.skipif(not os.path.isdir(MINILM), reason="MiniLM not present")
def test_minilm_matches_transformers(tmp_path):
  prefix = convert(MINILM, "hf", str(tmp_path))
  config = BertConfig.from_json_file(str(tmp_path / "bert_config.json"))
  encoder, _, _ = pretrained.load_tf1_model(config, prefix)
  expected = np.load(ENCODER_DIR / "hf_minilm_expected.npz")
  out = encoder(
    {k: expected[k] for k in ("input_ids", "input_mask", "segment_ids")}
  )
  got = {
    "embedding_output": out["embedding_output"],
    "layer_0": out["encoder_outputs"][0],
    "sequence_output": out["sequence_output"],
    "pooled_output": out["pooled_output"],
  }
  for key, value in got.items():
    np.testing.assert_allclose(
      np.asarray(value), expected[key], rtol=0, atol=1e-4, err_msg=key
    )
