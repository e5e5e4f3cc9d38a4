r"""TF Hub Transformer encoder: BERT inputs -> pooled / sequence outputs.

The "common SavedModel API for text" encoder, as TF Model Garden's
`export_tfhub --export_type=model` writes it, and reusable (fine-tunable):

    encoder = tf.saved_model.load(export_dir)
    outputs = encoder({"input_word_ids": ids, "input_mask": mask,
                       "input_type_ids": type_ids}, training=False)
    outputs["pooled_output"]     # [batch, H]
    outputs["sequence_output"]   # [batch, S, H]
    outputs["encoder_outputs"]   # list of the L layer outputs [batch, S, H]
    outputs["default"]           # = pooled_output
    encoder.trainable_variables  # what a fine-tuning step updates
    encoder.vocab_file, encoder.do_lower_case   # for preprocessing
    encoder.sp_model_file  # instead of vocab_file with --spm_model_file

`training=True` applies dropout. When the checkpoint is an original one
holding the masked-LM head (`cls/predictions/*`), `encoder.mlm(inputs)`
also takes `masked_lm_positions` [batch, P] and adds `mlm_logits`
[batch, P, vocab] (log-probabilities: logits normalised per row, so the
same softmax). The `serving_default` signature returns the same tensors,
the layers as `encoder_outputs_<i>`. `encoder.tf1_variables` maps the
original TF1 names to the variables, so `python -m bert_tf.convert_checkpoint
--input_format=tfhub` gives the checkpoint back exactly.

Example:
    python -m bert_tf.export_saved_model --task=tfhub_encoder \
      --checkpoint=uncased_L-12_H-768_A-12/bert_model.ckpt \
      --bert_config_file=.../bert_config.json --vocab_file=.../vocab.txt \
      --export_dir=/tmp/bert_encoder
    python -m bert_tf.export_saved_model --task=tfhub_encoder \
      --checkpoint=run/bert_model.ckpt --spm_model_file=spiece.model \
      --export_dir=/tmp/spm_encoder
"""

import tensorflow as tf

from bert_tf.checkpoints import checkpoint_io
from bert_tf.export import register_exporter
from bert_tf.export.tfhub_common import set_reusable
from bert_tf.export.tfhub_common import SPM_MODEL_FILE
from bert_tf.export.tfhub_common import TfHubExporter
from bert_tf.export.tfhub_common import tokenizer_file
from bert_tf.modeling.bert_encoder import BertEncoder
from bert_tf.modeling.heads.masked_lm_head import MaskedLMHead
from bert_tf.tokenizers.loading import load_tokenizer

INPUTS = ("input_word_ids", "input_mask", "input_type_ids")


def _spec(names):
  return {n: tf.TensorSpec([None, None], tf.int32, name=n) for n in names}


def encode(encoder, inputs, training):
  """The TF Hub encoder outputs of our `BertEncoder`."""
  outputs = encoder(
    {
      "input_ids": inputs["input_word_ids"],
      "input_mask": inputs["input_mask"],
      "segment_ids": inputs["input_type_ids"],
    },
    training=training,
  )
  return {
    "pooled_output": outputs["pooled_output"],
    "sequence_output": outputs["sequence_output"],
    "encoder_outputs": list(outputs["encoder_outputs"]),
    "default": outputs["pooled_output"],
  }


def _callable(fn, names):
  """`fn(inputs, training=False)` as a tf.function traced both ways."""
  function = tf.function(lambda inputs, training=False: fn(inputs, training))
  for training in (False, True):
    function.get_concrete_function(_spec(names), training=training)
  return function


class _MaskedLM(tf.train.Checkpoint):
  """`encoder.mlm`: the encoder outputs plus `mlm_logits`."""

  def __init__(self, encoder, head):
    super().__init__()

    def call(inputs, training):
      outputs = encode(encoder, inputs, training)
      outputs["mlm_logits"] = head(
        outputs["sequence_output"], inputs["masked_lm_positions"]
      )
      return outputs

    self.__call__ = _callable(call, INPUTS + ("masked_lm_positions",))
    set_reusable(
      self,
      encoder.variables + head.variables,
      encoder.trainable_variables + head.trainable_variables,
    )


class TfHubEncoder(tf.train.Checkpoint):
  """The SavedModel's root: callable, reusable, its vocabulary (or
  SentencePiece model, as Model Garden names it) as an asset."""

  def __init__(
    self, encoder, vocab_file, do_lower_case, mlm_head=None, sentencepiece=False
  ):
    super().__init__()
    asset = tf.saved_model.Asset(vocab_file)
    if sentencepiece:
      self.sp_model_file = asset
    else:
      self.vocab_file = asset
    self.do_lower_case = tf.Variable(
      bool(do_lower_case), trainable=False, name="do_lower_case"
    )
    self.__call__ = _callable(
      lambda x, training: encode(encoder, x, training), INPUTS
    )
    set_reusable(self, encoder.variables, encoder.trainable_variables)
    if mlm_head is not None:
      self.mlm = _MaskedLM(encoder, mlm_head)

  def serving_signature(self):
    """Flat outputs (a signature returns no lists)."""

    @tf.function(input_signature=[_spec(INPUTS)])
    def serve(inputs):
      outputs = self.__call__(inputs, training=False)
      flat = {k: v for k, v in outputs.items() if k != "encoder_outputs"}
      for i, layer in enumerate(outputs["encoder_outputs"]):
        flat["encoder_outputs_%d" % i] = layer
      return flat

    return serve.get_concrete_function()


@register_exporter("tfhub_encoder")
class TfHubEncoderExporter(TfHubExporter):
  """The encoder of any checkpoint (+ `.mlm` from an original one that
  holds the masked-LM head) as a TF Hub encoder."""

  INPUTS = INPUTS
  OPTIONS = (SPM_MODEL_FILE,)
  DEFAULT_MAX_SEQ_LENGTH = None  # any input length the model takes

  def __init__(
    self, config, vocab_file, do_lower_case, max_seq_length, options=None
  ):
    self.vocab_file, self.sentencepiece = tokenizer_file(vocab_file, options)
    super().__init__(
      config,
      self.vocab_file,
      do_lower_case,
      max_seq_length or config.max_position_embeddings,
      options,
    )
    if self.sentencepiece:
      self._metadata["spm_model_file"] = self._metadata.pop("vocab_file")

  def make_tokenizer(self, config, vocab_file, do_lower_case):
    if not self.sentencepiece:
      return super().make_tokenizer(config, vocab_file, do_lower_case)
    # The checks of the scripts' --spm_model_file; no in-graph tokenizer.
    tokenizer = load_tokenizer(None, do_lower_case, vocab_file)
    config.check_vocab(tokenizer.vocab, vocab_file)
    return tokenizer

  def build_model(self, config):
    self.config = config
    self.mlm_head = None
    return BertEncoder(config)

  def engine_object(self):
    # Every task model of the engine keeps its encoder as `encoder`.
    return tf.train.Checkpoint(encoder=self.model)

  def tf1_variables(self):
    return checkpoint_io.tf1_name_map(self.model, masked_lm=self.mlm_head)

  def restore(self, checkpoint):
    prefix = checkpoint_io.resolve_checkpoint(checkpoint)
    if MaskedLMHead.TF1_MARKER in checkpoint_io.checkpoint_shapes(prefix):
      self.mlm_head = MaskedLMHead(self.config, self.model.embedding_table)
    super().restore(checkpoint)
    self.root = TfHubEncoder(
      self.model,
      self.vocab_file,
      self.tokenizer.do_lower_case,
      self.mlm_head,
      self.sentencepiece,
    )
    # The original name of each variable, for the import (Keras 3 names
    # are not unique: every layer has its "kernel").
    self.root.tf1_variables = {
      n: v.value for n, v in self.tf1_variables().items()
    }
    self._metadata["mlm"] = self.mlm_head is not None

  def signatures(self):
    return {"serving_default": self.root.serving_signature()}
