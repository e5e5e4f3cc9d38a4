"""Export to the HuggingFace BERT layout (`model.safetensors` + `config.json`
+ `vocab.txt`): the inverse of `hf_import`.

Example:
    arrays = {name: np.asarray(v) for name, v in name_map.items()}
    write_hf_model("out_hf", config, arrays, vocab_file="vocab.txt")

Names follow `hf_import`'s rules backwards (`bert/encoder/layer_3/output/
dense/kernel` -> `encoder.layer.3.output.dense.weight`, transposed to torch's
[out, in]). Without task heads the names are BertModel's (no `bert.`
prefix); with any head they are the `Bert*For*` ones (`bert.` + the heads'
own names). The MLM decoder is not written: HF ties it to the word
embeddings on load, as the original does. `hidden_act` goes back to HF's
names (`gelu_exact` -> "gelu", the original tanh `gelu` -> "gelu_new").
"""

import json
import os
import re
import shutil

import numpy as np

from bert_tf.checkpoints import hf_import
from bert_tf.io_utils import atomic_output
from bert_tf.io_utils import InputError
from bert_tf.modeling.bert_config import LAYER_NORM_EPSILON

_HF_ACTIVATION = {
  "gelu_exact": "gelu",
  "gelu": "gelu_new",
  "relu": "relu",
  "tanh": "tanh",
  "linear": "linear",
}
# pylint: disable-next=protected-access
_HEADS = {tf1: hf for hf, tf1 in hf_import._HEAD_NAMES.items()}
# First match wins: the HF class that holds these heads.
_ARCHITECTURES = (
  ("output_weights", "BertForSequenceClassification"),
  ("cls/squad/output_weights", "BertForQuestionAnswering"),
  ("cls/seq_relationship/output_weights", "BertForPreTraining"),
  ("cls/predictions/output_bias", "BertForMaskedLM"),
)


def tf1_name_to_hf(name, prefix):
  """Returns (HF name, transpose?) for an original TF1 variable name;
  `prefix` ("bert." or "") goes before encoder names."""
  if name in _HEADS:
    return _HEADS[name], False
  if name.startswith("bert/"):
    scope, rest = prefix, name[len("bert/") :]
  elif name.startswith("cls/predictions/transform/"):
    scope, rest = "", name
  else:
    raise InputError("variable %s has no HuggingFace BERT name" % name)
  rest = re.sub(r"\blayer_(\d+)/", r"layer.\1/", rest)
  for tf1_leaf, hf_leaf in (
    ("LayerNorm/gamma", "LayerNorm.weight"),
    ("LayerNorm/beta", "LayerNorm.bias"),
  ):
    if rest.endswith(tf1_leaf):
      return scope + rest[: -len(tf1_leaf)].replace("/", ".") + hf_leaf, False
  if rest.endswith("_embeddings"):
    return scope + rest.replace("/", ".") + ".weight", False
  if rest.endswith("/kernel"):
    return scope + rest[: -len("/kernel")].replace("/", ".") + ".weight", True
  return scope + rest.replace("/", "."), False


def hf_config(config, names):
  """HF `config.json` dict for a BertConfig and the exported TF1 names."""
  values = config.to_dict()
  act = values.get("hidden_act") or "linear"
  if act not in _HF_ACTIVATION:
    raise InputError("hidden_act %r has no HuggingFace name" % act)
  values.update(
    hidden_act=_HF_ACTIVATION[act],
    model_type="bert",
    layer_norm_eps=LAYER_NORM_EPSILON,
    position_embedding_type="absolute",
  )
  values["architectures"] = [
    next(
      (arch for marker, arch in _ARCHITECTURES if marker in names), "BertModel"
    )
  ]
  if "output_weights" in names:
    num_labels = len(names["output_weights"])
    values["id2label"] = {str(i): "LABEL_%d" % i for i in range(num_labels)}
    values["label2id"] = {"LABEL_%d" % i: i for i in range(num_labels)}
  return values


def write_hf_model(output_dir, config, arrays, vocab_file=None):
  """Writes model.safetensors, config.json (and vocab.txt) to output_dir.

  Args:
    output_dir: folder, created if needed.
    config: BertConfig of the model.
    arrays: original TF1 name -> array (encoder and any heads).
    vocab_file: copied as vocab.txt when given.
  """
  from safetensors.numpy import save_file  # pylint: disable=g-import-not-at-top

  prefix = "bert." if any(not n.startswith("bert/") for n in arrays) else ""
  tensors = {}
  for name, value in sorted(arrays.items()):
    hf_name, transpose = tf1_name_to_hf(name, prefix)
    value = np.asarray(value, np.float32)
    tensors[hf_name] = np.ascontiguousarray(value.T if transpose else value)
  os.makedirs(output_dir, exist_ok=True)
  path = os.path.join(output_dir, "model.safetensors")
  tmp = path + ".tmp-%d" % os.getpid()
  save_file(tensors, tmp, metadata={"format": "pt"})  # torch-loadable
  os.replace(tmp, path)
  with atomic_output(os.path.join(output_dir, "config.json")) as f:
    f.write(
      json.dumps(hf_config(config, arrays), indent=2, sort_keys=True) + "\n"
    )
  if vocab_file:
    shutil.copyfile(vocab_file, os.path.join(output_dir, "vocab.txt"))
  return output_dir
