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

The tokenizer is the root's `vocab_file` asset, or its `sp_model_file` in
SentencePiece encoders (`tfhub_assets`), which may have no more pieces than
the embedding has rows.

Example:
    config, arrays, vocab, do_lower_case = read_tfhub_encoder("bert_en_L-2")
    # arrays: TF1 name -> np.ndarray; vocab: path of the asset or None
"""

import os
import re

from absl import logging
from google.protobuf import message
import numpy as np
import tensorflow as tf
from tensorflow.core.protobuf import saved_model_pb2
from tensorflow.core.protobuf import trackable_object_graph_pb2

from bert_tf import io_utils
from bert_tf.checkpoints.artefact import Artefact
from bert_tf.checkpoints.tfhub_assets import SentencePieceFile
from bert_tf.checkpoints.tfhub_assets import tokenizer_asset
from bert_tf.io_utils import InputError
from bert_tf.modeling.bert_config import BertConfig

_OBJECT_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"
_METADATA = ("assets.extra", "export_config.json")
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


def _saved_model(model):
  """(SavedModel proto, checkpoint reader) of Artefact `model`."""
  if not model.exists("saved_model.pb"):
    raise InputError(
      "%s: not a readable SavedModel (no saved_model.pb)" % model.name
    )
  try:
    proto = saved_model_pb2.SavedModel.FromString(
      model.read_bytes("saved_model.pb")
    )
  except message.DecodeError as e:
    raise model.error(("saved_model.pb",), "not a SavedModel (%s)" % e) from e
  index = ("variables", "variables.index")
  model.file(*index)
  # Every file the reader opens next to the index stays in the folder.
  shards = [
    model.file("variables", name)
    for name in model.names("variables", prefix="variables.data-")
  ]
  try:
    reader = tf.train.load_checkpoint(model.path("variables", "variables"))
  except (ValueError, tf.errors.OpError) as e:
    raise model.error(
      index, "unreadable variables index (%s)" % io_utils.first_line(e)
    ) from e
  if not proto.meta_graphs or not reader.has_tensor(_OBJECT_GRAPH_KEY):
    raise InputError("%s: not an object-based (TF2) SavedModel" % model.name)
  _require_whole(model, reader, shards)
  return proto, reader


def _require_whole(model, reader, shards):
  """InputError if the data files are shorter than the numbers the index
  lists (a copy cut short), before any is read."""
  dtypes = reader.get_variable_to_dtype_map()
  listed = sum(
    int(np.prod(shape)) * dtypes[name].size
    for name, shape in reader.get_variable_to_shape_map().items()
    if dtypes[name].is_floating or dtypes[name].is_integer
  )
  held = sum(os.path.getsize(path) for path in shards)
  if held < listed:
    raise model.error(
      ("variables", os.path.basename(shards[0]) if len(shards) == 1 else "*"),
      "cut short: %d bytes, the index lists %d" % (held, listed),
    )


def _read(model, reader, key):
  try:
    return reader.get_tensor(key)
  except (tf.errors.OpError, IndexError, ValueError) as e:
    raise model.error(
      ("variables",),
      "unreadable variable %s (%s)" % (key, io_utils.first_line(e)),
    ) from e


def _child(nodes, node_id, name):
  for child in nodes[node_id].children:
    if child.local_name == name:
      return child.node_id
  return None


def _variables(model):
  """(checkpoint reader, {TF1 name: checkpoint key} of our export's
  `tf1_variables`, {name: key} of the float variables the root lists as
  `variables`, vocab asset's real path or None)."""
  proto, reader = _saved_model(model)
  meta = proto.meta_graphs[0]
  nodes = meta.object_graph_def.nodes
  try:
    graph = trackable_object_graph_pb2.TrackableObjectGraph.FromString(
      _read(model, reader, _OBJECT_GRAPH_KEY)
    )
  except message.DecodeError as e:
    raise model.error(("variables",), "no object graph (%s)" % e) from e
  if not nodes:
    raise model.error(("saved_model.pb",), "no object graph")
  keys = {}
  for i, node in enumerate(nodes):
    # Weights only: not do_lower_case, step counters or dropout seeds.
    if (
      node.WhichOneof("kind") == "variable"
      and i < len(graph.nodes)
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
  return reader, ours, root_listed, tokenizer_asset(model, meta)


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


def _config_from_shapes(shapes, heads, source):
  """The BertConfig the encoder arrays imply (original defaults otherwise)."""
  if heads is None:
    raise InputError(
      "%s: the query kernel of layer 0 is not [hidden, heads, head size]; "
      "the number of attention heads is unknown" % source
    )
  sizes = {
    "bert/embeddings/word_embeddings": 2,
    "bert/embeddings/position_embeddings": 2,
    "bert/embeddings/token_type_embeddings": 2,
    "bert/encoder/layer_0/intermediate/dense/kernel": 2,
  }
  for name, ndim in sizes.items():
    if len(shapes[name]) != ndim:
      raise InputError(
        "%s: %s has %d dimensions, not %d"
        % (source, name, len(shapes[name]), ndim)
      )
  vocab_size, hidden = shapes["bert/embeddings/word_embeddings"]
  layers = 0
  while "bert/encoder/layer_%d/attention/self/query/kernel" % layers in shapes:
    layers += 1
  try:
    return BertConfig(
      vocab_size,
      hidden_size=hidden,
      num_hidden_layers=layers,
      num_attention_heads=heads,
      intermediate_size=shapes[
        "bert/encoder/layer_0/intermediate/dense/kernel"
      ][1],
      max_position_embeddings=shapes["bert/embeddings/position_embeddings"][0],
      type_vocab_size=shapes["bert/embeddings/token_type_embeddings"][0],
      hidden_act="gelu",
      initializer_range=0.02,
    )
  except InputError as e:
    raise InputError("%s: the config its arrays imply: %s" % (source, e)) from e


def _recorded_config(model, shapes):
  """The config our export recorded, checked against its arrays."""
  metadata = model.read_json(*_METADATA)
  where = model.shown(*_METADATA)
  if not isinstance(metadata.get("bert_config"), dict):
    raise InputError("%s: no 'bert_config' object" % where)
  config = BertConfig.from_dict(metadata["bert_config"], where)
  config.check_arrays(shapes, where, every_layer=True)
  return config


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
  """(BertConfig, {TF1 name: array}, vocab asset's real path (or
  `SentencePieceFile`) or None, do_lower_case or None) of a TF Hub BERT
  encoder SavedModel folder. The config is checked against the array shapes
  before any array is read."""
  model = Artefact(folder, "--input")
  reader, ours, root_listed, vocab = _variables(model)
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
  listed = reader.get_variable_to_shape_map()
  shapes = {tf1: _tf1_shape(tf1, listed[key]) for tf1, key in sources.items()}
  # [H, heads, H/heads] in Model Garden; [H, H] in the original.
  query = listed[sources["bert/encoder/layer_0/attention/self/query/kernel"]]
  if ours and model.exists(*_METADATA):
    config = _recorded_config(model, shapes)
  else:
    config = _config_from_shapes(
      shapes, query[1] if len(query) == 3 else None, model.name
    )
  if isinstance(vocab, SentencePieceFile):
    config.check_vocab(range(vocab.pieces), vocab.shown)
  arrays = {
    tf1: np.reshape(_read(model, reader, key), shapes[tf1])
    for tf1, key in sorted(sources.items())
  }
  key = "do_lower_case/.ATTRIBUTES/VARIABLE_VALUE"  # the root's variable
  do_lower_case = (
    bool(_read(model, reader, key)) if reader.has_tensor(key) else None
  )
  logging.info("read %d variables from %s", len(arrays), folder)
  return config, arrays, vocab, do_lower_case


def _tf1_shape(name, shape):
  """The original's shape of a (possibly per-head) Model Garden array."""
  shape = tuple(shape)
  if len(shape) == 3:  # [H, A, D] or [A, D, H] -> [H, H]
    if name.endswith("attention/output/dense/kernel"):
      return (shape[0] * shape[1], shape[2])
    return (shape[0], shape[1] * shape[2])
  if len(shape) == 2 and name.endswith("/bias"):  # [A, D] -> [H]
    return (shape[0] * shape[1],)
  return shape
