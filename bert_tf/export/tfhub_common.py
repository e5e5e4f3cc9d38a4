"""What the two TF Hub exporters share: a root object instead of a model.

A TF Hub SavedModel is called through its root object (`__call__` and
sub-objects such as `.tokenize`), not only through signatures, so the
exporter saves `self.root`. Reusable SavedModels also list their
`variables`, `trainable_variables` and `regularization_losses`, which
`set_reusable` attaches (the tf.Variables under Keras 3's variables: those
are what the saved functions capture). Both take `--spm_model_file` (a
SentencePiece model) in place of `--vocab_file`.
"""

from bert_tf.export.base import Exporter
from bert_tf.export.base import Option
from bert_tf.io_utils import InputError

SPM_MODEL_FILE = Option(
  "spm_model_file",
  None,
  "tfhub_preprocess/tfhub_encoder: a SentencePiece model (ALBERT style) "
  "instead of --vocab_file; it must hold [CLS] and [SEP].",
)


class TfHubExporter(Exporter):
  """An `Exporter` whose SavedModel root is `self.root`."""

  root = None

  def bfloat16_weights(self):
    # The root captures the model's own variables, which TF Hub users
    # fine-tune: they stay float32 whatever the compute dtype.
    return False

  def saved_root(self):
    return self.root


def tf_variables(keras_variables):
  """The tf.Variables behind Keras 3 variables."""
  return [v.value for v in keras_variables]


def set_reusable(obj, variables, trainable_variables):
  """Attaches the reusable-SavedModel attributes to `obj`."""
  obj.variables = tf_variables(variables)
  obj.trainable_variables = tf_variables(trainable_variables)
  obj.regularization_losses = []


def tokenizer_file(vocab_file, options):
  """(--vocab_file or --spm_model_file, whether it is SentencePiece); one
  line if both or neither are given."""
  spm = (options or {}).get("spm_model_file")
  if spm and vocab_file:
    raise InputError(
      "--spm_model_file=%s and --vocab_file=%s: give one (a SentencePiece "
      "model replaces the vocabulary)" % (spm, vocab_file)
    )
  if not (spm or vocab_file):
    raise InputError("--vocab_file (or --spm_model_file) is required")
  return spm or vocab_file, bool(spm)
