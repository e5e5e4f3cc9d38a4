"""Classifier SavedModel: `text_a` [, `text_b`] -> class probabilities.

Outputs `probabilities` [batch, num_labels] in label-list order and `label`
(the arg-max label's name); a regression model (STS-B, `--regression`)
outputs `predictions` [batch]. With `--text_b` (the default for pair tasks)
the signature also takes `text_b`; an empty `text_b` row is a single text,
as in the original.

The label list is data: `--labels=a,b,c` (label-id order, as the run's
`--labels` / processor), `--labels_file` (one a line) or `--task_name` for
the GLUE / XNLI tasks. The library never imports data_prep, so the task
table below restates their label lists;
tests/export/test_classifier_export.py pins it to
`data_prep.classifier.tasks.TASKS`.

Example:
    python -m bert_tf.export_saved_model --task=classifier --task_name=mrpc \
      --checkpoint=/tmp/mrpc_output --bert_config_file=bert_config.json \
      --vocab_file=vocab.txt --max_seq_length=128 --export_dir=/tmp/mrpc_sm
"""

import tensorflow as tf

from bert_tf.export import register_exporter
from bert_tf.export.base import Exporter
from bert_tf.export.base import LABELS
from bert_tf.export.base import LABELS_FILE
from bert_tf.export.base import Option
from bert_tf.export.base import read_labels_file
from bert_tf.io_utils import InputError
from bert_tf.tasks.classification import ClassifierModel

_BINARY = ("0", "1")
_NLI3 = ("contradiction", "entailment", "neutral")
_NLI2 = ("entailment", "not_entailment")
# task name -> (labels in label-id order, or None for regression; pairs?)
TASK_LABELS = {
  "cola": (_BINARY, False),
  "sst-2": (_BINARY, False),
  "mrpc": (_BINARY, True),
  "sts-b": (None, True),
  "qqp": (_BINARY, True),
  "mnli": (_NLI3, True),
  "mnli-mm": (_NLI3, True),
  "qnli": (_NLI2, True),
  "rte": (_NLI2, True),
  "wnli": (_BINARY, True),
  "xnli": (_NLI3, True),
  "fakenews": (("agreed", "disagreed", "unrelated"), True),
}


@register_exporter("classifier")
class ClassifierExporter(Exporter):
  """`run_classifier.py`'s model over raw text."""

  OPTIONS = (
    Option(
      "task_name",
      None,
      "classifier: a GLUE/XNLI task whose label "
      "list (and pair-ness) to use: %s." % ", ".join(TASK_LABELS),
    ),
    LABELS,
    LABELS_FILE,
    Option(
      "regression",
      False,
      "classifier: a one-score regression model (like STS-B).",
    ),
    Option(
      "text_b",
      None,
      "classifier/encoder: the signature also takes "
      "text_b (default: true, false for single-text GLUE tasks).",
      kind="bool",
    ),
  )

  def resolve_options(self, options):
    sources = [
      n
      for n in ("task_name", "labels", "labels_file", "regression")
      if options[n]
    ]
    if len(sources) != 1:
      raise InputError(
        "--task=classifier needs exactly one of --task_name, "
        "--labels, --labels_file and --regression (got %s)"
        % (", ".join("--" + n for n in sources) or "none")
      )
    labels, pairs = options["labels"], True
    if options["task_name"]:
      name = options["task_name"].lower()
      if name not in TASK_LABELS:
        raise InputError(
          "--task_name=%s: no label list known; valid: %s "
          "(or give --labels)" % (options["task_name"], ", ".join(TASK_LABELS))
        )
      labels, pairs = TASK_LABELS[name]
    elif options["labels_file"]:
      labels = read_labels_file(options["labels_file"])
    if labels is not None:
      labels = list(labels)
      if len(labels) < 2 or len(set(labels)) != len(labels):
        raise InputError(
          "labels %s: need two or more distinct labels" % ",".join(labels)
        )
    text_b = pairs if options["text_b"] is None else options["text_b"]
    return dict(options, labels=labels, text_b=bool(text_b))

  @property
  def labels(self):
    return self.options["labels"]

  def build_model(self, config):
    return ClassifierModel(config, len(self.labels) if self.labels else 1)

  def input_names(self):
    return ("text_a", "text_b") if self.options["text_b"] else ("text_a",)

  def serve(self, text_a, text_b=None):
    features = self.encode(text_a, text_b)
    # Padding past the longest row of the request changes no real token's
    # output (masked keys get exactly 0 attention), so it is cut: a short
    # single request runs on its own length, not max_seq_length.
    longest = tf.maximum(
      tf.reduce_max(tf.reduce_sum(features["input_mask"], 1)), 1
    )
    features = {k: v[:, :longest] for k, v in features.items()}
    outputs = self.model(features, training=False)
    if self.labels is None:
      return {"predictions": outputs["predictions"]}
    probabilities = outputs["probabilities"]
    label = tf.gather(
      tf.constant(self.labels), tf.argmax(probabilities, axis=-1)
    )
    return {"probabilities": probabilities, "label": label}
