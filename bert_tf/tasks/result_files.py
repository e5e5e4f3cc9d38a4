"""Result files as the original wrote them (`key = value` lines).

TensorFlow-free: scripts and post-processing write them without a model.

Example:
    write_eval_results("out/eval_results.txt",
                       {"eval_accuracy": 0.84, "global_step": 343})
"""

from absl import logging
import numpy as np

from bert_tf.io_utils import atomic_output


def format_value(value):
  """`str` of a metric as the original printed it (numpy float32 / int)."""
  if isinstance(value, (int, np.integer)):
    return str(int(value))
  return str(np.float32(value))


def write_eval_results(path, results):
  """Writes sorted `key = value` lines (the original eval_results.txt)."""
  with atomic_output(path) as writer:
    for key in sorted(results):
      logging.info("  %s = %s", key, format_value(results[key]))
      writer.write("%s = %s\n" % (key, format_value(results[key])))


def write_lines(path, lines):
  """Writes `lines` (each ending in a newline) to `path` atomically."""
  with atomic_output(path) as writer:
    writer.writelines(lines)
  logging.info("wrote %s", path)
