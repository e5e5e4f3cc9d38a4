"""Encoder SavedModel: `text_a` [, `text_b`] -> BERT features.

Outputs `pooled_output` [batch, H], `sequence_output` [batch, S, H], every
transformer layer as `layer_0` ... `layer_{L-1}` [batch, S, H] (the last one
equals `sequence_output`) and `input_mask` [batch, S] (1 on real tokens), so
a client can drop padding. The weights come from any checkpoint holding the
encoder: an original one, or a run of any task (its `model.encoder`).

Example:
    python -m bert_tf.export_saved_model --task=encoder \
      --checkpoint=uncased_L-12_H-768_A-12/bert_model.ckpt \
      --bert_config_file=.../bert_config.json --vocab_file=.../vocab.txt \
      --export_dir=/tmp/encoder_sm
"""

import tensorflow as tf

from bert_tf.export import register_exporter
from bert_tf.export.base import Exporter
from bert_tf.export.base import Option
from bert_tf.modeling.bert_encoder import BertEncoder


@register_exporter("encoder")
class EncoderExporter(Exporter):
  """`BertEncoder` (what extract_features.py reads) over raw text."""

  OPTIONS = (
    Option(
      "text_b",
      None,
      "classifier/encoder: the signature also takes text_b (default: true).",
      kind="bool",
    ),
  )

  def resolve_options(self, options):
    return dict(options, text_b=options["text_b"] is not False)

  def build_model(self, config):
    return BertEncoder(config)

  def engine_object(self):
    # Every task model of the engine keeps its encoder as `encoder`.
    return tf.train.Checkpoint(encoder=self.model)

  def input_names(self):
    return ("text_a", "text_b") if self.options["text_b"] else ("text_a",)

  def serve(self, text_a, text_b=None):
    features = self.encode(text_a, text_b)
    outputs = self.model(features, training=False)
    result = {
      "pooled_output": outputs["pooled_output"],
      "sequence_output": outputs["sequence_output"],
      "input_mask": features["input_mask"],
    }
    for i, layer in enumerate(outputs["encoder_outputs"]):
      result["layer_%d" % i] = layer
    return result
