"""Tiny HuggingFace BERT files for the import/export tests, and the name
rules they check.

Example:
    tensors = tiny_hf_model(str(tmp_path / "hf"))  # model.safetensors, ...
    prefix = convert(str(tmp_path / "hf"), "hf", str(tmp_path / "out"))
"""

import json
import os

import numpy as np
from safetensors.numpy import save_file

from tests.conftest import REPO

_H, _I, _V, _P, _T = 8, 12, 20, 10, 2


def _hf_layer(i):
  p = "bert.encoder.layer.%d." % i
  shapes = {
    "attention.self.query": (_H, _H),
    "attention.self.key": (_H, _H),
    "attention.self.value": (_H, _H),
    "attention.output.dense": (_H, _H),
    "intermediate.dense": (_I, _H),
    "output.dense": (_H, _I),
  }
  names = {}
  for scope, (out, inp) in shapes.items():
    names[p + scope + ".weight"] = (out, inp)
    names[p + scope + ".bias"] = (out,)
  for scope in ("attention.output.LayerNorm", "output.LayerNorm"):
    names[p + scope + ".weight"] = (_H,)
    names[p + scope + ".bias"] = (_H,)
  return names


def tiny_hf_model(folder, hidden_act="gelu"):
  """A BertForPreTraining-style file + a QA and classifier head, random."""
  shapes = {
    "bert.embeddings.word_embeddings.weight": (_V, _H),
    "bert.embeddings.position_embeddings.weight": (_P, _H),
    "bert.embeddings.token_type_embeddings.weight": (_T, _H),
    "bert.embeddings.LayerNorm.weight": (_H,),
    "bert.embeddings.LayerNorm.bias": (_H,),
    "bert.pooler.dense.weight": (_H, _H),
    "bert.pooler.dense.bias": (_H,),
    "cls.predictions.transform.dense.weight": (_H, _H),
    "cls.predictions.transform.dense.bias": (_H,),
    "cls.predictions.transform.LayerNorm.weight": (_H,),
    "cls.predictions.transform.LayerNorm.bias": (_H,),
    "cls.predictions.bias": (_V,),
    "cls.predictions.decoder.weight": (_V, _H),
    "cls.seq_relationship.weight": (2, _H),
    "cls.seq_relationship.bias": (2,),
    "qa_outputs.weight": (2, _H),
    "qa_outputs.bias": (2,),
    "classifier.weight": (3, _H),
    "classifier.bias": (3,),
  }
  shapes.update(_hf_layer(0))
  rng = np.random.RandomState(0)
  tensors = {
    n: rng.normal(size=s).astype(np.float32) for n, s in shapes.items()
  }
  tensors["bert.embeddings.position_ids"] = np.arange(_P)[None]
  os.makedirs(folder, exist_ok=True)
  save_file(tensors, os.path.join(folder, "model.safetensors"))
  config = {
    "model_type": "bert",
    "vocab_size": _V,
    "hidden_size": _H,
    "num_hidden_layers": 1,
    "num_attention_heads": 2,
    "intermediate_size": _I,
    "hidden_act": hidden_act,
    "max_position_embeddings": _P,
    "type_vocab_size": _T,
    "layer_norm_eps": 1e-12,
    "initializer_range": 0.02,
  }
  with open(os.path.join(folder, "config.json"), "w") as f:
    json.dump(config, f)
  with open(os.path.join(folder, "vocab.txt"), "w") as f:
    f.write("".join("tok%d\n" % i for i in range(_V)))
  return tensors


# Hand-written expectations: HF name -> (TF1 name, transposed?).
EXPECTED_NAMES = {
  "bert.embeddings.word_embeddings.weight": (
    "bert/embeddings/word_embeddings",
    False,
  ),
  "bert.embeddings.LayerNorm.weight": (
    "bert/embeddings/LayerNorm/gamma",
    False,
  ),
  "bert.encoder.layer.0.attention.self.query.weight": (
    "bert/encoder/layer_0/attention/self/query/kernel",
    True,
  ),
  "bert.encoder.layer.0.intermediate.dense.weight": (
    "bert/encoder/layer_0/intermediate/dense/kernel",
    True,
  ),
  "bert.encoder.layer.0.output.LayerNorm.bias": (
    "bert/encoder/layer_0/output/LayerNorm/beta",
    False,
  ),
  "bert.pooler.dense.weight": ("bert/pooler/dense/kernel", True),
  "cls.predictions.transform.dense.weight": (
    "cls/predictions/transform/dense/kernel",
    True,
  ),
  "cls.predictions.bias": ("cls/predictions/output_bias", False),
  "cls.seq_relationship.weight": ("cls/seq_relationship/output_weights", False),
  "qa_outputs.weight": ("cls/squad/output_weights", False),
  "classifier.weight": ("output_weights", False),
  "encoder.layer.11.output.dense.bias": (
    "bert/encoder/layer_11/output/dense/bias",
    False,
  ),
  "embeddings.position_ids": (None, False),
  "cls.predictions.decoder.weight": (None, False),
}


# The real MiniLM in ../shared (or $BERT_TF_MINILM_DIR); tests skip without.
MINILM = os.environ.get(
  "BERT_TF_MINILM_DIR",
  str(REPO.parent / "shared" / "models" / "all-MiniLM-L6-v2"),
)
