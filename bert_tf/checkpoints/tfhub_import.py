"""Import a TF Hub BERT encoder SavedModel as original TF1 arrays + config.

Reads the SavedModel's files without running it (no custom ops, no model
code): `saved_model.pb` names every variable of the object graph, and the
`variables/` checkpoint stores node i of that graph under node i of its own
object graph, which gives each variable's checkpoint key.

Two naming schemes map to the original names:
  * our `--task=tfhub_encoder` exports carry `tf1_variables`, a dict from
    the original name to the variable (heads included), and the config in
    `assets.extra/export_config.json`;
  * TF Model Garden's (TF Hub / Kaggle BERTs) are mapped by rule over the
    root's `variables`: `transformer/layer_3/self_attention/query/kernel`
    [H, A, H/A] -> `bert/encoder/layer_3/attention/self/query/kernel` [H, H],
    `pooler_transform` -> `bert/pooler/dense`, ... (`_RULES`).

For Model Garden's, the config comes from the shapes (sizes) and the
original's defaults (`gelu`, dropout 0.1, `initializer_range` 0.02). A
SavedModel whose variables do not cover a BERT encoder, or have variables
no rule maps, is refused naming what is missing.

Example:
    config, arrays, vocab, do_lower_case = read_tfhub_encoder("bert_en_L-2")
    # arrays: TF1 name -> np.ndarray; vocab: path of the asset or None
"""

import json
import os
import re

from absl import logging
import numpy as np
import tensorflow as tf
from tensorflow.core.protobuf import saved_model_pb2
from tensorflow.core.protobuf import trackable_object_graph_pb2

from bert_tf.io_utils import InputError
from bert_tf.modeling.bert_config import BertConfig

_OBJECT_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"
_METADATA = os.path.join("assets.extra", "export_config.json")
_LAYER = r"transformer/layer_(\d+)/"
_OUT = r"bert/encoder/layer_\1/"
# Model Garden variable name (after any prefix) -> original TF1 name.
_RULES = [
  (re.compile(r"(?:.*/)?" + pattern), target)
  for pattern, target in (
    (r"word_embeddings/embeddings", "bert/embeddings/word_embeddings"),
    (r"position_embedding/embeddings", "bert/embeddings/position_embeddings"),
    (r"type_embeddings/embeddings", "bert/embeddings/token_type_embeddings"),
    (r"embeddings/layer_norm/(gamma|beta)", r"bert/embeddings/LayerNorm/\1"),
    (
      _LAYER + r"self_attention/(query|key|value)/(kernel|bias)",
      _OUT + r"attention/self/\2/\3",
    ),
    (
      _LAYER + r"self_attention/attention_output/(kernel|bias)",
      _OUT + r"attention/output/dense/\2",
    ),
    (
      _LAYER + r"self_attention_layer_norm/(gamma|beta)",
      _OUT + r"attention/output/LayerNorm/\2",
    ),
    (_LAYER + r"intermediate/(kernel|bias)", _OUT + r"intermediate/dense/\2"),
    (_LAYER + r"output/(kernel|bias)", _OUT + r"output/dense/\2"),
    (_LAYER + r"output_layer_norm/(gamma|beta)", _OUT + r"output/LayerNorm/\2"),
    (r"pooler_transform/(kernel|bias)", r"bert/pooler/dense/\1"),
  )
]
_EMBEDDINGS = (
  "word_embeddings",
  "token_type_embeddings",
  "position_embeddings",
  "LayerNorm/gamma",
  "LayerNorm/beta",
)
_LAYER_VARIABLES = tuple(
  "attention/self/%s/%s" % (p, k)
  for p in ("query", "key", "value")
  for k in ("kernel", "bias")
) + tuple(
  "%s/%s" % (scope, k)
  for scope, pair in (
    ("attention/output/dense", ("kernel", "bias")),
    ("attention/output/LayerNorm", ("gamma", "beta")),
    ("intermediate/dense", ("kernel", "bias")),
    ("output/dense", ("kernel", "bias")),
    ("output/LayerNorm", ("gamma", "beta")),
  )
  for k in pair
)


def _saved_model(folder):
  """(SavedModel proto, checkpoint reader) of `folder`; InputError if none."""
  path = os.path.join(folder, "saved_model.pb")
  try:
    with open(path, "rb") as f:
      proto = saved_model_pb2.SavedModel.FromString(f.read())
    reader = tf.train.load_checkpoint(
      os.path.join(folder, "variables", "variables")
    )
  except (OSError, ValueError, tf.errors.OpError) as e:
    raise InputError(
      "--input=%s: not a readable SavedModel (%s)"
      % (folder, str(e).splitlines()[0] if str(e) else type(e).__name__)
    ) from e
  if not proto.meta_graphs or not reader.has_tensor(_OBJECT_GRAPH_KEY):
    raise InputError(
      "--input=%s: not an object-based (TF2) SavedModel" % folder
    )
  return proto, reader


def _child(nodes, node_id, name):
  for child in nodes[node_id].children:
    if child.local_name == name:
      return child.node_id
  return None


def _variables(folder):
  """(checkpoint reader, {TF1 name: checkpoint key} of our export's
  `tf1_variables`, {name: key} of the float variables the root lists as
  `variables`, vocab asset path or None)."""
  proto, reader = _saved_model(folder)
  meta = proto.meta_graphs[0]
  nodes = meta.object_graph_def.nodes
  graph = trackable_object_graph_pb2.TrackableObjectGraph.FromString(
    reader.get_tensor(_OBJECT_GRAPH_KEY)
  )
  keys = {}
  for i, node in enumerate(nodes):
    # Weights only: not do_lower_case, step counters or dropout seeds.
    if (
      node.WhichOneof("kind") == "variable"
      and graph.nodes[i].attributes
      and tf.as_dtype(node.variable.dtype).is_floating
    ):
      keys[i] = (
        node.variable.name,
        graph.nodes[i].attributes[0].checkpoint_key,
      )
  listed = _child(nodes, 0, "variables")
  root_listed = (
    dict(keys.values())
    if listed is None
    else dict(
      keys[c.node_id] for c in nodes[listed].children if c.node_id in keys
    )
  )
  ours = _child(nodes, 0, "tf1_variables")
  ours = (
    {}
    if ours is None
    else {
      c.local_name: keys[c.node_id][1]
      for c in nodes[ours].children
      if c.node_id in keys
    }
  )
  vocab = None
  asset = _child(nodes, 0, "vocab_file")
  if asset is not None and nodes[asset].WhichOneof("kind") == "asset":
    name = meta.asset_file_def[nodes[asset].asset.asset_file_def_index].filename
    vocab = os.path.join(folder, "assets", name)
  return reader, ours, root_listed, vocab


def _map_by_rules(names):
  """({TF1 name: SavedModel name} by `_RULES`, [names no rule maps])."""
  mapped, unmapped = {}, []
  for name in sorted(names):
    for pattern, target in _RULES:
      match = pattern.fullmatch(name)
      if match:
        mapped[match.expand(target)] = name
        break
    else:
      unmapped.append(name)
  return mapped, unmapped


def _config_from_shapes(shapes):
  """The BertConfig the encoder arrays imply (original defaults otherwise)."""
  vocab_size, hidden = shapes["bert/embeddings/word_embeddings"]
  layers = 0
  while "bert/encoder/layer_%d/attention/self/query/kernel" % layers in shapes:
    layers += 1
  return BertConfig(
    vocab_size,
    hidden_size=hidden,
    num_hidden_layers=layers,
    num_attention_heads=shapes["heads"],
    intermediate_size=shapes["bert/encoder/layer_0/intermediate/dense/kernel"][
      1
    ],
    max_position_embeddings=shapes["bert/embeddings/position_embeddings"][0],
    type_vocab_size=shapes["bert/embeddings/token_type_embeddings"][0],
    hidden_act="gelu",
    initializer_range=0.02,
  )


def _require_encoder(tf1_names, folder, unmapped):
  """InputError naming the first missing encoder variable."""
  layers = {
    int(m.group(1))
    for m in (re.match(r"bert/encoder/layer_(\d+)/", n) for n in tf1_names)
    if m
  }
  required = (
    ["bert/embeddings/" + n for n in _EMBEDDINGS]
    + ["bert/pooler/dense/kernel", "bert/pooler/dense/bias"]
    + [
      "bert/encoder/layer_%d/%s" % (i, n)
      for i in range(max(layers, default=0) + 1)
      for n in _LAYER_VARIABLES
    ]
  )
  missing = [n for n in required if n not in tf1_names]
  if missing:
    raise InputError(
      "--input=%s: not a BERT encoder SavedModel: no %s (%d of the %d "
      "encoder variables missing)%s"
      % (
        folder,
        missing[0],
        len(missing),
        len(required),
        "; variables it has: %s" % ", ".join(unmapped[:3]) if unmapped else "",
      )
    )


def read_tfhub_encoder(folder):
  """(BertConfig, {TF1 name: array}, vocab path or None, do_lower_case or
  None) of a TF Hub BERT encoder SavedModel folder."""
  reader, ours, root_listed, vocab = _variables(folder)
  if ours:
    sources, unmapped = ours, []
  else:
    names, unmapped = _map_by_rules(root_listed)
    sources = {tf1: root_listed[name] for tf1, name in names.items()}
  _require_encoder(sources, folder, unmapped)
  if unmapped:
    raise InputError(
      "--input=%s: %d variables do not map to BERT's, e.g. "
      "%s" % (folder, len(unmapped), unmapped[0])
    )
  arrays, heads = {}, None
  for tf1, key in sorted(sources.items()):
    value = reader.get_tensor(key)
    if tf1 == "bert/encoder/layer_0/attention/self/query/kernel":
      # [H, heads, H/heads] in Model Garden; [H, H] in the original.
      heads = value.shape[1] if value.ndim == 3 else None
    arrays[tf1] = np.reshape(value, _tf1_shape(tf1, value))
  metadata = os.path.join(folder, _METADATA)
  if ours and os.path.isfile(metadata):
    with open(metadata, encoding="utf-8") as f:
      config = BertConfig.from_dict(json.load(f)["bert_config"])
  else:
    shapes = {n: a.shape for n, a in arrays.items()}
    shapes["heads"] = heads
    if heads is None:
      raise InputError(
        "--input=%s: the query kernel of layer 0 is not "
        "[hidden, heads, head size]; the number of attention "
        "heads is unknown" % folder
      )
    config = _config_from_shapes(shapes)
  key = "do_lower_case/.ATTRIBUTES/VARIABLE_VALUE"  # the root's variable
  do_lower_case = (
    bool(reader.get_tensor(key)) if reader.has_tensor(key) else None
  )
  logging.info("read %d variables from %s", len(arrays), folder)
  return (
    config,
    arrays,
    vocab if vocab and os.path.isfile(vocab) else None,
    (do_lower_case),
  )


def _tf1_shape(name, value):
  """The original's shape of a (possibly per-head) Model Garden array."""
  if value.ndim == 3:  # [H, A, D] or [A, D, H] -> [H, H]
    return (
      (-1, value.shape[-1])
      if name.endswith("attention/output/dense/kernel")
      else (value.shape[0], -1)
    )
  if value.ndim == 2 and name.endswith("/bias"):  # [A, D] -> [H]
    return (-1,)
  return value.shape
