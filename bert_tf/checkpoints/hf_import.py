"""Import HuggingFace BERT weights (`model.safetensors` + `config.json`).

Example:
    config = read_hf_config("all-MiniLM-L6-v2")
    arrays, unused = read_hf_weights("all-MiniLM-L6-v2")  # TF1 name -> array
    # bert_tf.modeling.pretrained.load_hf_model builds the model from them.

HF names map to the original TF1 names by rule: `encoder.layer.3.output.
dense.weight` -> `bert/encoder/layer_3/output/dense/kernel` (transposed: torch
keeps Linear weights as [out, in]), `LayerNorm.weight/bias` -> `gamma/beta`,
and the task heads `cls.predictions.*`, `cls.seq_relationship.*`,
`qa_outputs.*` (-> `cls/squad/*`) and `classifier.*` (-> root
`output_weights`/`output_bias`, whose [out, in] layout needs no transpose).
HF's `"gelu"` is the exact erf form, so it becomes `hidden_act="gelu_exact"`.
"""

import re

import numpy as np

from bert_tf.checkpoints.artefact import Artefact
from bert_tf.io_utils import InputError
from bert_tf.modeling.bert_config import BertConfig
from bert_tf.modeling.bert_config import LAYER_NORM_EPSILON

_HF_ACTIVATIONS = {
  "gelu": "gelu_exact",
  "gelu_new": "gelu",
  "gelu_pytorch_tanh": "gelu",
  "gelu_fast": "gelu",
  "relu": "relu",
  "tanh": "tanh",
  "linear": "linear",
}

_CONFIG_KEYS = (
  "vocab_size",
  "hidden_size",
  "num_hidden_layers",
  "num_attention_heads",
  "intermediate_size",
  "hidden_dropout_prob",
  "attention_probs_dropout_prob",
  "max_position_embeddings",
  "type_vocab_size",
  "initializer_range",
)

# Heads whose HF weight already has the original [out, in] layout.
_HEAD_NAMES = {
  "cls.predictions.bias": "cls/predictions/output_bias",
  "cls.seq_relationship.weight": "cls/seq_relationship/output_weights",
  "cls.seq_relationship.bias": "cls/seq_relationship/output_bias",
  "qa_outputs.weight": "cls/squad/output_weights",
  "qa_outputs.bias": "cls/squad/output_bias",
  "classifier.weight": "output_weights",
  "classifier.bias": "output_bias",
}

_LEAF_NAMES = {
  "LayerNorm.weight": "LayerNorm/gamma",
  "LayerNorm.gamma": "LayerNorm/gamma",
  "LayerNorm.bias": "LayerNorm/beta",
  "LayerNorm.beta": "LayerNorm/beta",
}


def hf_name_to_tf1(hf_name):
  """Returns (original TF1 name, transpose?) or (None, False) if unused."""
  if hf_name in _HEAD_NAMES:
    return _HEAD_NAMES[hf_name], False
  name = hf_name[len("bert.") :] if hf_name.startswith("bert.") else hf_name
  if name.startswith(("embeddings.", "encoder.", "pooler.")):
    scope = "bert/"
  elif name.startswith("cls.predictions.transform."):
    scope = ""
  else:
    return None, False
  if name.endswith("position_ids"):
    return None, False
  name = re.sub(r"\blayer\.(\d+)\.", r"layer_\1.", name)
  for leaf, tf1_leaf in _LEAF_NAMES.items():
    if name.endswith(leaf):
      return scope + name[: -len(leaf)].replace(".", "/") + tf1_leaf, False
  if name.endswith("_embeddings.weight"):
    return scope + name[: -len(".weight")].replace(".", "/"), False
  if name.endswith(".weight"):
    return scope + name[: -len(".weight")].replace(".", "/") + "/kernel", True
  return scope + name.replace(".", "/"), False


def read_hf_config(model_dir):
  """HF `config.json` -> BertConfig; rejects what our encoder cannot run."""
  model = Artefact(model_dir)
  path = model.shown("config.json")
  if not model.exists("config.json"):
    raise InputError("cannot read HF config %s: no such file" % path)
  hf = model.read_json("config.json")
  if hf.get("model_type", "bert") != "bert":
    raise InputError(
      "%s: model_type %r is not 'bert'" % (path, hf.get("model_type"))
    )
  if hf.get("position_embedding_type", "absolute") != "absolute":
    raise InputError(
      "%s: only absolute position embeddings are supported" % path
    )
  eps = hf.get("layer_norm_eps", LAYER_NORM_EPSILON)
  if eps != LAYER_NORM_EPSILON:
    raise InputError(
      "%s: layer_norm_eps %r differs from BERT's 1e-12" % (path, eps)
    )
  act = hf.get("hidden_act", "gelu")
  if not isinstance(act, str) or act not in _HF_ACTIVATIONS:
    raise InputError("%s: unsupported hidden_act %r" % (path, act))
  values = {k: hf[k] for k in _CONFIG_KEYS if k in hf}
  values["hidden_act"] = _HF_ACTIVATIONS[act]
  return BertConfig.from_dict(values, path)


def read_hf_weights(model_dir):
  """Reads every `*.safetensors` file of `model_dir`.

  Returns:
    (arrays, unused): original TF1 name -> float32 array (already in TF1
    layout), and the sorted HF names that have no TF1 counterpart (e.g.
    `position_ids`, the tied `cls.predictions.decoder.*`).
  """
  # pylint: disable=g-import-not-at-top
  from safetensors import safe_open
  from safetensors import SafetensorError

  model = Artefact(model_dir)
  files = model.names(suffix=".safetensors")
  if not files:
    raise InputError(
      "%s: no *.safetensors weights (HF format expected)" % model_dir
    )
  arrays, unused = {}, []
  for name in files:
    path = model.shown(name)
    try:
      with safe_open(model.file(name), framework="np") as f:
        for hf_name in f.keys():
          name, transpose = hf_name_to_tf1(hf_name)
          if name is None:
            unused.append(hf_name)
            continue
          value = np.asarray(f.get_tensor(hf_name), dtype=np.float32)
          arrays[name] = value.T if transpose else value
    except (OSError, ValueError, TypeError, SafetensorError) as e:
      raise InputError(
        "%s: unreadable safetensors file (%s)" % (path, str(e).splitlines()[0])
      ) from e
  return arrays, sorted(unused)
