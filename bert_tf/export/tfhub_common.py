"""What the two TF Hub exporters share: a root object instead of a model.

A TF Hub SavedModel is called through its root object (`__call__` and
sub-objects such as `.tokenize`), not only through signatures, so the
exporter saves `self.root`. Reusable SavedModels also list their
`variables`, `trainable_variables` and `regularization_losses`, which
`set_reusable` attaches (the tf.Variables under Keras 3's variables: those
are what the saved functions capture).
"""

from bert_tf.export.base import Exporter


class TfHubExporter(Exporter):
  """An `Exporter` whose SavedModel root is `self.root`."""

  root = None

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
