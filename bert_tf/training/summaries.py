"""TensorBoard scalars of training and evaluation (`Trainer`, `EvalHook`).

They are written with the core `tf.summary.write` op and the scalar
plugin's tag, so that the `tensorboard` package is not needed at training
time.

Example:
    with tf.summary.create_file_writer("out").as_default():
      write_scalars({"loss": 0.61, "learning_rate": 5e-5}, step=100)
"""

import tensorflow as tf
from tensorflow.core.framework import summary_pb2

_SCALAR_METADATA = summary_pb2.SummaryMetadata(
    plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="scalars"))


def write_scalars(scalars, step):
  """Writes {tag: number} as TensorBoard scalars to the default writer."""
  for name, value in scalars.items():
    tf.summary.write(name, tf.constant(value, tf.float32), step=step,
                     metadata=_SCALAR_METADATA)
