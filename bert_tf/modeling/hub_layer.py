r"""A Keras 3 layer over a TF Hub-format BERT encoder or preprocessor.

`hub.KerasLayer` needs Keras 2, and Keras 3's `keras.layers.TFSMLayer`
cannot fit with an optimizer that keeps slots (Adam, AdamW, SGD with
momentum): it names its weights after the SavedModel's variables
(`...kernel:0`), and a slot named after those is not a valid scope name.
`HubLayer` loads the same folders (`export_saved_model --task=tfhub_encoder`
or `tfhub_preprocess`, TF Model Garden's `export_tfhub`, Kaggle / TF Hub
downloads) and wraps their variables as Keras weights with clean names:

    preprocess = bert_tf.HubLayer("bert_preprocess")
    encoder = bert_tf.HubLayer("bert_encoder", trainable=True)
    text = keras.Input((), dtype="string")
    pooled = encoder(preprocess(text))["pooled_output"]
    model = keras.Model(text, keras.layers.Dense(2)(pooled))

An encoder maps {input_word_ids, input_mask, input_type_ids} to
{pooled_output, sequence_output, encoder_outputs, default} (or only its
`output_key` entry); `training` reaches it (dropout) when the layer is
trainable, as in `hub.KerasLayer`. A preprocessor maps strings [batch] to
the encoder's inputs, or a list of two string tensors to packed pairs
(`bert_pack_inputs`); `seq_length` overrides its default length.

The layer is registered and its config holds the folder, so a `.keras`
model reloads in Keras's safe mode (the fine-tuned weights come from the
`.keras` file, the functions from the folder). Before loading, the folder's
graph is read, not run: a SavedModel whose functions touch files (other
than a vocabulary table reading its asset), run Python or print is refused.
"""

import os
import re

from google.protobuf import message
import keras
import tensorflow as tf
from tensorflow.core.protobuf import saved_model_pb2
import tensorflow_text  # noqa: F401  (the preprocessors' ops, before loading)

from bert_tf.io_utils import InputError

# Ops a BERT encoder or preprocessor never needs and that act outside the
# graph: file and checkpoint I/O, readers and datasets, summaries, debug
# dumps, Python calls, printing, RPC.
_REFUSED_OPS = re.compile(
  r"File|Save|Restore|Reader|Dataset|Summary|PyFunc|Print|ImmutableConst"
  r"|Checkpoint|Rpc|Debug|DumpTensor|Sharded"
)
# A WordPiece vocabulary table reads the SavedModel's vocab asset.
_ALLOWED_OPS = frozenset(
  ("InitializeTableFromTextFile", "InitializeTableFromTextFileV2")
)
_INVALID_NAME_CHARS = re.compile(r"[^A-Za-z0-9_.-]")


def saved_model_dir(handle):
  """The SavedModel folder `handle` names (absolute when local)."""
  handle = os.fspath(handle)
  if handle.startswith(("http://", "https://")):
    raise InputError(
      "HubLayer: %s is a URL: download the model first (e.g. "
      "kagglehub.model_download) and pass its folder" % handle
    )
  if "://" not in handle:
    handle = os.path.abspath(handle)
  if not tf.io.gfile.exists(os.path.join(handle, "saved_model.pb")):
    raise InputError(
      "HubLayer: %s: no saved_model.pb (a TF Hub / Kaggle SavedModel folder "
      "is expected)" % handle
    )
  return handle


def check_saved_model(path):
  """Reads `path`'s graph; returns its root's attribute names.

  Raises InputError for a root that is not callable or for a refused op
  in any function the loaded object can run.
  """
  with tf.io.gfile.GFile(os.path.join(path, "saved_model.pb"), "rb") as f:
    try:
      graphs = saved_model_pb2.SavedModel.FromString(f.read()).meta_graphs
    except message.DecodeError:
      graphs = None
  if not graphs:
    raise InputError("HubLayer: %s: saved_model.pb is unreadable" % path)
  graph = graphs[0]
  nodes = graph.object_graph_def.nodes
  root = {c.local_name for c in nodes[0].children} if nodes else set()
  if "__call__" not in root:
    raise InputError(
      "HubLayer: %s: the SavedModel's root is not callable (a TF2 TF Hub "
      "encoder or preprocessor is expected)" % path
    )
  library = graph.graph_def.library
  # What loading, calling and back-propagating can run: the object graph's
  # functions, the custom gradients and all they call (not the TF1 saver,
  # which only graph_def's nodes call).
  pending = [n.bare_concrete_function.concrete_function_name for n in nodes]
  for node in nodes:
    pending.extend(node.function.concrete_functions)
  pending.extend(g.gradient_func for g in library.registered_gradients)
  pending.extend(g.gradient_func for g in library.gradient)
  library = {f.signature.name: f for f in library.function}
  seen = set()
  while pending:
    name = pending.pop()
    if name in seen or name not in library:
      continue
    seen.add(name)
    for node in library[name].node_def:
      if _REFUSED_OPS.search(node.op) and node.op not in _ALLOWED_OPS:
        raise InputError(
          "HubLayer: %s: refused: function %s runs op %s (touches files, "
          "Python or the console)" % (path, name, node.op)
        )
      pending.append(node.op)
      for attr in node.attr.values():
        pending.append(attr.func.name)
        pending.extend(f.name for f in attr.list.func)
  return root


def _concrete_functions(endpoint):
  """The traced functions of a loaded function or callable object."""
  if not hasattr(endpoint, "concrete_functions"):
    endpoint = endpoint.__call__
  return list(endpoint.concrete_functions)


def _keras_name(variable):
  """`layer_0/attention/kernel:0` -> `layer_0_attention_kernel`."""
  return _INVALID_NAME_CHARS.sub("_", variable.name.rsplit(":", 1)[0])


@keras.saving.register_keras_serializable(package="bert_tf")
class HubLayer(keras.layers.Layer):
  """A TF Hub-format BERT encoder or preprocessor as a Keras 3 layer.

  Args:
    handle: the SavedModel folder (gs:// paths too; URLs are refused).
    output_key: return only this output (e.g. "pooled_output").
    seq_length: a preprocessor's packed length (default: its own).
    trainable: whether fitting updates the SavedModel's variables (False,
      as in `hub.KerasLayer`).
  """

  def __init__(
    self, handle, output_key=None, seq_length=None, trainable=False, **kwargs
  ):
    super().__init__(trainable=trainable, **kwargs)
    self.handle = saved_model_dir(handle)
    self.output_key = output_key
    self.seq_length = seq_length
    root = check_saved_model(self.handle)
    self._module = tf.saved_model.load(self.handle)
    self._is_preprocessor = {"tokenize", "bert_pack_inputs"} <= root
    calls = _concrete_functions(self._module)
    # Model Garden's encoders and preprocessors and our encoders take
    # `training` (+ Keras 2's `mask`); our preprocessor takes strings only.
    self._takes_training = any(
      "training" in c.function_type.parameters for c in calls
    )
    self._check_options(calls[0].structured_outputs)
    if self._is_preprocessor:
      calls += _concrete_functions(self._module.tokenize)
      calls += _concrete_functions(self._module.bert_pack_inputs)
    # The variables the functions use, wrapped (not copied): fitting updates
    # the loaded SavedModel's own variables.
    variables = {id(v): v for c in calls for v in c.variables}
    self.hub_variables = [
      keras.Variable(v, trainable=v.trainable, name=_keras_name(v))
      for v in variables.values()
    ]
    self.built = True

  def _check_options(self, outputs):
    names = sorted(outputs) if isinstance(outputs, dict) else []
    if self.output_key is not None and self.output_key not in names:
      raise InputError(
        "HubLayer: output_key=%r: %s has no such output; it has: %s"
        % (self.output_key, self.handle, ", ".join(names) or "none named")
      )
    if self.seq_length is not None and not (
      self._is_preprocessor and self.seq_length >= 3
    ):
      raise InputError(
        "HubLayer: seq_length=%r: a preprocessor's length, >= 3 "
        "([CLS] x [SEP])" % self.seq_length
      )

  def call(self, inputs, training=None):
    pairs = isinstance(inputs, (list, tuple))
    if self._is_preprocessor and (pairs or self.seq_length):
      outputs = self._pack(inputs if pairs else [inputs])
    else:
      kwargs = {}
      if self._takes_training:  # a frozen layer runs in inference mode
        kwargs["training"] = bool(training) and self.trainable
      outputs = self._module(inputs, **kwargs)
    return outputs[self.output_key] if self.output_key else outputs

  def _pack(self, texts):
    """`bert_pack_inputs` on the texts' word pieces, at `seq_length`."""
    length = {}
    if self.seq_length:
      length["seq_length"] = tf.constant(self.seq_length, tf.int32)
    segments = [self._module.tokenize(t) for t in texts]
    return self._module.bert_pack_inputs(segments, **length)

  def get_config(self):
    return {
      **super().get_config(),
      "handle": self.handle,
      "output_key": self.output_key,
      "seq_length": self.seq_length,
    }
