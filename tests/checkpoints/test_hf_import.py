"""HuggingFace import: name mapping on a tiny random file (CI) and MiniLM vs
the outputs HF `transformers` computed (fixture made once, outside the suite)."""

import json
import os

import numpy as np
import pytest
from safetensors.numpy import save_file
import tensorflow as tf

from bert_tf.modeling import pretrained
from bert_tf.checkpoints import hf_import
from bert_tf.modeling.bert_config import BertConfig
from bert_tf.cli.convert_checkpoint import convert
from bert_tf.io_utils import InputError
from tests.modeling.test_common import ENCODER_DIR

_H, _I, _V, _P, _T = 8, 12, 20, 10, 2


def _hf_layer(i):
  p = "bert.encoder.layer.%d." % i
  shapes = {"attention.self.query": (_H, _H), "attention.self.key": (_H, _H),
            "attention.self.value": (_H, _H),
            "attention.output.dense": (_H, _H),
            "intermediate.dense": (_I, _H), "output.dense": (_H, _I)}
  names = {}
  for scope, (out, inp) in shapes.items():
    names[p + scope + ".weight"] = (out, inp)
    names[p + scope + ".bias"] = (out,)
  for scope in ("attention.output.LayerNorm", "output.LayerNorm"):
    names[p + scope + ".weight"] = (_H,)
    names[p + scope + ".bias"] = (_H,)
  return names


def _tiny_hf_model(folder, hidden_act="gelu"):
  """A BertForPreTraining-style file + a QA and classifier head, random."""
  shapes = {
      "bert.embeddings.word_embeddings.weight": (_V, _H),
      "bert.embeddings.position_embeddings.weight": (_P, _H),
      "bert.embeddings.token_type_embeddings.weight": (_T, _H),
      "bert.embeddings.LayerNorm.weight": (_H,),
      "bert.embeddings.LayerNorm.bias": (_H,),
      "bert.pooler.dense.weight": (_H, _H), "bert.pooler.dense.bias": (_H,),
      "cls.predictions.transform.dense.weight": (_H, _H),
      "cls.predictions.transform.dense.bias": (_H,),
      "cls.predictions.transform.LayerNorm.weight": (_H,),
      "cls.predictions.transform.LayerNorm.bias": (_H,),
      "cls.predictions.bias": (_V,), "cls.predictions.decoder.weight": (_V, _H),
      "cls.seq_relationship.weight": (2, _H), "cls.seq_relationship.bias": (2,),
      "qa_outputs.weight": (2, _H), "qa_outputs.bias": (2,),
      "classifier.weight": (3, _H), "classifier.bias": (3,),
  }
  shapes.update(_hf_layer(0))
  rng = np.random.RandomState(0)
  tensors = {n: rng.normal(size=s).astype(np.float32)
             for n, s in shapes.items()}
  tensors["bert.embeddings.position_ids"] = np.arange(_P)[None]
  os.makedirs(folder, exist_ok=True)
  save_file(tensors, os.path.join(folder, "model.safetensors"))
  config = {"model_type": "bert", "vocab_size": _V, "hidden_size": _H,
            "num_hidden_layers": 1, "num_attention_heads": 2,
            "intermediate_size": _I, "hidden_act": hidden_act,
            "max_position_embeddings": _P, "type_vocab_size": _T,
            "layer_norm_eps": 1e-12, "initializer_range": 0.02}
  with open(os.path.join(folder, "config.json"), "w") as f:
    json.dump(config, f)
  with open(os.path.join(folder, "vocab.txt"), "w") as f:
    f.write("".join("tok%d\n" % i for i in range(_V)))
  return tensors


# Hand-written expectations: HF name -> (TF1 name, transposed?).
_EXPECTED_NAMES = {
    "bert.embeddings.word_embeddings.weight":
        ("bert/embeddings/word_embeddings", False),
    "bert.embeddings.LayerNorm.weight": ("bert/embeddings/LayerNorm/gamma",
                                         False),
    "bert.encoder.layer.0.attention.self.query.weight":
        ("bert/encoder/layer_0/attention/self/query/kernel", True),
    "bert.encoder.layer.0.intermediate.dense.weight":
        ("bert/encoder/layer_0/intermediate/dense/kernel", True),
    "bert.encoder.layer.0.output.LayerNorm.bias":
        ("bert/encoder/layer_0/output/LayerNorm/beta", False),
    "bert.pooler.dense.weight": ("bert/pooler/dense/kernel", True),
    "cls.predictions.transform.dense.weight":
        ("cls/predictions/transform/dense/kernel", True),
    "cls.predictions.bias": ("cls/predictions/output_bias", False),
    "cls.seq_relationship.weight": ("cls/seq_relationship/output_weights",
                                    False),
    "qa_outputs.weight": ("cls/squad/output_weights", False),
    "classifier.weight": ("output_weights", False),
    "encoder.layer.11.output.dense.bias":
        ("bert/encoder/layer_11/output/dense/bias", False),
    "embeddings.position_ids": (None, False),
    "cls.predictions.decoder.weight": (None, False),
}


def test_name_rules():
  for hf_name, expected in _EXPECTED_NAMES.items():
    assert hf_import.hf_name_to_tf1(hf_name) == expected, hf_name


def test_tiny_model_round_trips_through_tf1_checkpoint(tmp_path):
  tensors = _tiny_hf_model(str(tmp_path / "hf"))
  prefix = convert(str(tmp_path / "hf"), "hf", str(tmp_path / "out"))
  reader = tf.train.load_checkpoint(prefix)
  written = reader.get_variable_to_shape_map()
  used = 0
  for hf_name, value in tensors.items():
    name, transpose = hf_import.hf_name_to_tf1(hf_name)
    if name is None:
      continue
    used += 1
    np.testing.assert_array_equal(reader.get_tensor(name),
                                  value.T if transpose else value)
  assert used == len(written) == len(tensors) - 2
  config = BertConfig.from_json_file(str(tmp_path / "out" /
                                         "bert_config.json"))
  assert config.hidden_act == "gelu_exact" and config.num_hidden_layers == 1
  assert (tmp_path / "out" / "vocab.txt").read_text().startswith("tok0\n")


@pytest.mark.parametrize("change, message", [
    ({"hidden_act": "silu"}, "silu"),
    ({"layer_norm_eps": 1e-5}, "layer_norm_eps"),
    ({"position_embedding_type": "relative_key"}, "absolute"),
])
def test_unsupported_hf_configs(tmp_path, change, message):
  _tiny_hf_model(str(tmp_path))
  path = tmp_path / "config.json"
  config = json.loads(path.read_text())
  config.update(change)
  path.write_text(json.dumps(config))
  with pytest.raises(InputError, match=message):
    hf_import.read_hf_config(str(tmp_path))


def test_hf_activation_names(tmp_path):
  for hf_act, ours in (("gelu", "gelu_exact"), ("gelu_new", "gelu"),
                       ("relu", "relu")):
    _tiny_hf_model(str(tmp_path), hidden_act=hf_act)
    assert hf_import.read_hf_config(str(tmp_path)).hidden_act == ours


_MINILM = os.environ.get("BERT_TF_MINILM_DIR",
                         "/work/shared/models/all-MiniLM-L6-v2")


@pytest.mark.slow
@pytest.mark.skipif(not os.path.isdir(_MINILM), reason="MiniLM not present")
def test_minilm_matches_transformers(tmp_path):
  prefix = convert(_MINILM, "hf", str(tmp_path))
  config = BertConfig.from_json_file(str(tmp_path / "bert_config.json"))
  from bert_tf.checkpoints import checkpoint_io  # pylint: disable=g-import-not-at-top
  encoder, _, _ = pretrained.load_tf1_model(config, prefix)
  expected = np.load(ENCODER_DIR / "hf_minilm_expected.npz")
  out = encoder({k: expected[k] for k in ("input_ids", "input_mask",
                                          "segment_ids")})
  got = {"embedding_output": out["embedding_output"],
         "layer_0": out["encoder_outputs"][0],
         "sequence_output": out["sequence_output"],
         "pooled_output": out["pooled_output"]}
  for key, value in got.items():
    np.testing.assert_allclose(np.asarray(value), expected[key], rtol=0,
                               atol=1e-4, err_msg=key)
