"""bert_tf: the original BERT pipeline on TensorFlow 2 / Keras 3.

The curated API (names resolve lazily, so `import bert_tf` stays cheap and
TensorFlow-free until a model name is used):

    import bert_tf
    clf = bert_tf.TextClassifier.from_pretrained("bert-tiny", num_labels=2)
    clf.fit([("a text", "its pair"), ...], [1, ...], epochs=3)
    clf.predict([("another text", "its pair")])  # [{"label": "1", ...}]
    config = bert_tf.BertConfig.from_json_file("bert_config.json")
    encoder, heads, report = bert_tf.load_tf1_model(config, "bert_model.ckpt")
    tokenizer = bert_tf.FullTokenizer("vocab.txt", do_lower_case=True)
    trainer = bert_tf.Trainer(task, lambda: bert_tf.create_optimizer(
        5e-5, 1000, 100), "out")
    encoder = bert_tf.HubLayer("bert_encoder", trainable=True)  # Keras 3

Layers of the package (docs/architecture.md): modeling, tasks, training,
checkpoints, tokenizers, records, export, cli, api.
"""

import importlib
import sys

_quieted = False  # whether the first name was resolved

_EXPORTS = {
  # Model
  "BertConfig": "bert_tf.modeling.bert_config",
  "BertEncoder": "bert_tf.modeling.bert_encoder",
  "HubLayer": "bert_tf.modeling.hub_layer",  # TF Hub-format SavedModels
  # Checkpoints
  "load_tf1_model": "bert_tf.modeling.pretrained",
  "load_hf_model": "bert_tf.modeling.pretrained",
  "init_from_checkpoint": "bert_tf.checkpoints.checkpoint_io",
  "save_tf1_checkpoint": "bert_tf.checkpoints.checkpoint_io",
  # Tokenizers
  "FullTokenizer": "bert_tf.tokenizers.tokenization",
  "SentencePieceTokenizer": "bert_tf.tokenizers.sentencepiece_tokenizer",
  "TfTextTokenizer": "bert_tf.tokenizers.tf_text_tokenizer",
  # Training
  "Task": "bert_tf.tasks.base",
  "Trainer": "bert_tf.training.trainer",
  "create_optimizer": "bert_tf.training.optimization",
  # Task models over raw text (the Python API)
  "TextClassifier": "bert_tf.api.classifier",
  "SpanExtractor": "bert_tf.api.span_extractor",
  "TokenTagger": "bert_tf.api.token_tagger",
  "MultipleChoice": "bert_tf.api.multiple_choice",
  # Errors
  "InputError": "bert_tf.io_utils",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
  if name in _EXPORTS:
    _quiet_tensorflow()
    return getattr(importlib.import_module(_EXPORTS[name]), name)
  raise AttributeError("module 'bert_tf' has no attribute %r" % name)


def _quiet_tensorflow():
  """TensorFlow's start-up lines filtered as the commands filter them
  (docs/python_api.md), unless the program imported TensorFlow first: its
  own logging stands. TF_CPP_MIN_LOG_LEVEL is set to 2 only if unset."""
  global _quieted
  if not _quieted and "tensorflow" not in sys.modules:
    from bert_tf.runtime import quiet  # pylint: disable=g-import-not-at-top

    quiet.quiet_tensorflow(argv=[])  # the program's argv is not ours
  _quieted = True


def __dir__():
  return sorted(list(globals()) + __all__)
