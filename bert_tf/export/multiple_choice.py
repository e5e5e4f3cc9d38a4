r"""Multiple-choice SavedModel: `context`, `prefix`, `endings` -> probabilities.

Inputs: `context` [batch] (SWAG sent1), `prefix` [batch] (sent2, the start
every ending continues; "" for none) and `endings` [batch, choices]
strings; `--noprefix` drops the `prefix` input. Each choice is packed as
run_multiple_choice.py does, `[CLS] context [SEP] prefix + " " + ending
[SEP]`, truncated like run_classifier's pairs. Outputs `probabilities`
[batch, choices] (softmax over the choices, in ending order, as
test_results.tsv) and `label` [batch] (int64 index of the likeliest
ending).

Example:
    python -m bert_tf.export_saved_model --task=multiple_choice \
      --checkpoint=/tmp/swag_output --bert_config_file=bert_config.json \
      --vocab_file=vocab.txt --max_seq_length=128 --export_dir=/tmp/swag_sm
"""

import tensorflow as tf

from bert_tf.export import register_exporter
from bert_tf.export.base import Exporter
from bert_tf.export.base import Option
from bert_tf.tasks.multiple_choice import MultipleChoiceModel


@register_exporter("multiple_choice")
class MultipleChoiceExporter(Exporter):
  """`run_multiple_choice.py`'s model over raw text."""

  OPTIONS = (
    Option(
      "prefix",
      True,
      "multiple_choice: the signature takes `prefix` "
      "(SWAG sent2) before each ending.",
    ),
  )

  def build_model(self, config):
    return MultipleChoiceModel(config)

  def input_names(self):
    if self.options["prefix"]:
      return ("context", "prefix", "endings")
    return ("context", "endings")

  def input_shapes(self):
    return dict(super().input_shapes(), endings=[None, None])

  def serve(self, context, endings, prefix=None):
    features = self.encode_choices(context, endings, prefix)
    probabilities = self.model(features, training=False)["probabilities"]
    return {
      "probabilities": probabilities,
      "label": tf.argmax(probabilities, axis=-1),
    }

  def encode_choices(self, context, endings, prefix=None):
    """Packed inputs [batch, choices, max_seq_length] (also the Python
    API's training features)."""
    shape = tf.shape(endings)
    checks = [
      tf.debugging.assert_equal(
        shape[0],
        tf.shape(context)[0],
        message="endings needs one row of choices per context",
      ),
      tf.debugging.assert_positive(
        shape[1], message="endings needs at least one choice"
      ),
    ]
    if prefix is not None:
      context, prefix = self.check_batch([context, prefix])
      endings = tf.strings.join(
        [tf.broadcast_to(prefix[:, None], shape), endings], separator=" "
      )
    else:
      endings = tf.strings.join([" ", endings])  # "" + " " + ending
    with tf.control_dependencies(checks):
      context = tf.identity(context)
    # One packed input per choice, [batch * choices, max_seq_length].
    first = tf.gather(
      self.tokenizer(context), tf.repeat(tf.range(shape[0]), shape[1])
    )
    second = self.tokenizer(tf.reshape(endings, [-1]))
    features = self.tokenizer.pack([first, second], self.max_seq_length)
    return {
      k: tf.reshape(v, [shape[0], shape[1], self.max_seq_length])
      for k, v in features.items()
    }
