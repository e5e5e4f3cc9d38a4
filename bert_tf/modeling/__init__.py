"""The original `modeling.py` names: `BertConfig` and the encoder.

    from bert_tf import modeling
    config = modeling.BertConfig.from_json_file("bert_config.json")
    encoder = modeling.BertEncoder(config)

Layers: embeddings, self-attention, transformer block, encoder (one TF1 name
map); `heads/` holds the task heads. Names resolve lazily, so importing the
config (TF-free) does not load Keras.
"""

import importlib

_EXPORTS = {
  "BertConfig": "bert_tf.modeling.bert_config",
  "BertEncoder": "bert_tf.modeling.bert_encoder",
  "BertEmbeddings": "bert_tf.modeling.bert_embeddings",
  "TransformerBlock": "bert_tf.modeling.transformer_block",
  "get_activation": "bert_tf.modeling.activations",
}


def __getattr__(name):
  if name in _EXPORTS:
    return getattr(importlib.import_module(_EXPORTS[name]), name)
  raise AttributeError("module %r has no attribute %r" % (__name__, name))


def __dir__():
  return sorted(list(globals()) + list(_EXPORTS))
