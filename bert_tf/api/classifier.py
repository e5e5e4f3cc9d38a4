"""`TextClassifier`: run_classifier.py's model over raw texts and pairs.

Example:
    import bert_tf
    clf = bert_tf.TextClassifier.from_pretrained("all-MiniLM-L6-v2",
                                                 num_labels=2)
    clf.fit([("He left.", "He went away."), ("Hi.", "Tax rates rose.")],
            [1, 0], epochs=3, batch_size=2)
    clf.predict([("She left.", "She went away.")])
    # [{"label": "1", "score": 0.93, "probabilities": {"0": 0.07, "1": 0.93}}]
    clf.predict([("She left.", "She went away.")], raw=True)  # [[p0, p1]]
    clf.evaluate(pairs, labels)   # eval_accuracy, eval_loss, (F1 ...)
    clf.save_run("/tmp/run")      # run_classifier.py --do_predict reads it
    clf.export("/tmp/serving")    # as export_saved_model --task=classifier

Inputs are a list of texts, or of (text_a, text_b) pairs. Labels are label
names (`labels=`; default "0".."N-1") or ids; `num_labels=1` is a
regression (`predict` gives {"score": value}). `task_name=` a GLUE/XNLI
task takes its label list and metrics (e.g. "mrpc": F1 too), so that
`--task_name=MRPC` runs of the script read the run folder; otherwise the
run is `--task_name=tsv --labels=...`. fit and evaluate featurize as
run_classifier.py (data_prep/classifier's `convert_single_example`), and
evaluate returns its eval_results.txt (`classifier_results.eval_results`).
"""

import numpy as np

from bert_tf.api.base import INPUTS
from bert_tf.api.base import stacked
from bert_tf.api.base import TaskApi
from bert_tf.api.inputs import examples
from bert_tf.api.inputs import shown
from bert_tf.api.inputs import strings
from bert_tf.export.classifier import TASK_LABELS
from bert_tf.io_utils import InputError
from bert_tf.jobs import classifier as classifier_job
from bert_tf.tasks import classifier_results
from bert_tf.tasks.classification import ClassificationTask
from data_prep.classifier.example import InputExample
from data_prep.classifier.features import convert_single_example


class TextClassifier(TaskApi):
  """Sentence (pair) classification or regression over raw text."""

  KIND = "classifier"
  JOB = classifier_job.ClassifierJob
  CONFIG = classifier_job.ClassifierConfig

  @classmethod
  def _settings(cls, given, recorded):
    unknown = set(given) - {"num_labels", "labels", "task_name"}
    if unknown:
      raise InputError(
        "TextClassifier: unknown argument %s" % sorted(unknown)[0]
      )
    if recorded is not None:
      head = recorded.head
      if head.get("multi_label"):
        raise InputError(
          "a --multi_label run: TextClassifier takes "
          "single-label and regression models"
        )
      count = 1 if head.get("regression") else len(head["labels"])
      for key, value in (
        ("num_labels", count),
        ("labels", head.get("labels")),
        ("task_name", head.get("task_name")),
      ):
        if given.get(key) not in (None, value):
          raise InputError(
            "%s=%s: the run's model has %s=%s" % (key, given[key], key, value)
          )
      return head, recorded.sequence
    task_name = (given.get("task_name") or "tsv").lower()
    labels, num_labels = given.get("labels"), given.get("num_labels")
    if task_name != "tsv":
      if task_name not in TASK_LABELS:
        raise InputError(
          "task_name=%s: unknown; valid: %s"
          % (task_name, ", ".join(TASK_LABELS))
        )
      labels = labels or TASK_LABELS[task_name][0]
      num_labels = num_labels or (len(labels) if labels else 1)
    if labels is not None:
      labels = [str(label) for label in labels]
      if num_labels not in (None, len(labels)):
        raise InputError(
          "num_labels=%d but %d labels" % (num_labels, len(labels))
        )
    elif not num_labels or num_labels < 1:
      raise InputError(
        "TextClassifier needs num_labels= (1: regression) or labels="
      )
    elif num_labels > 1:
      labels = [str(i) for i in range(num_labels)]
    return {
      "task_name": task_name,
      "labels": labels,
      "regression": labels is None,
      "multi_label": False,
    }, {}

  @property
  def labels(self):
    """The label names in id order (None for a regression)."""
    return self.head["labels"]

  def _options(self):
    # text_b: as the GLUE task, else until fit() sees single texts.
    pairs = TASK_LABELS.get(self.head["task_name"], (None, True))[1]
    if self.labels is None:
      return {"regression": True, "text_b": pairs}
    return {"labels": self.labels, "text_b": pairs}

  def _task(self):
    return ClassificationTask(
      self.config, len(self.labels or [0]), self.max_seq_length
    )

  def _inputs(self, x):
    x = examples(x, "texts or (text_a, text_b) pairs")
    pairs = None
    for i, example in enumerate(x):
      if isinstance(example, (str, bytes)):
        kind = False
      elif isinstance(example, (tuple, list)) and len(example) == 2:
        kind = True
      else:
        raise InputError(
          "input %d: %s is neither a text nor a (text_a, text_b) pair"
          % (i, shown(example))
        )
      if pairs is None:
        pairs = kind
      elif kind != pairs:
        raise InputError(
          "input %d is a %s, input 0 a %s: give all texts or all "
          "(text_a, text_b) pairs"
          % (i, *(("pair", "text") if kind else ("text", "pair")))
        )
    if not pairs:
      return {"text_a": strings(x, "input %d")}
    self.config.check_segments(True, "inputs")
    return {
      "text_a": strings([p[0] for p in x], "input %d's text_a"),
      "text_b": strings([p[1] for p in x], "input %d's text_b"),
    }

  def _label_names(self, y, count):
    """The labels as run_classifier.py's examples hold them: label names
    (ids mapped to theirs), or floats for a regression."""
    y = list(y)
    if len(y) != count:
      raise InputError("%d inputs but %d labels" % (count, len(y)))
    if self.labels is None:
      return [_score(i, label) for i, label in enumerate(y)]
    names = []
    for i, label in enumerate(y):
      if isinstance(label, (int, np.integer)) and 0 <= label < len(self.labels):
        names.append(self.labels[label])
      elif str(label) in self.labels and not isinstance(
        label, (int, np.integer)
      ):
        names.append(str(label))
      else:
        raise InputError(
          "label %d: %s is not one of %s (or an id below %d)"
          % (i, shown(label), ",".join(self.labels), len(self.labels))
        )
    return names

  def _job_settings(self):
    name = self.head["task_name"]
    if name != "tsv":
      return {"task_name": name}
    # The columns a TSV of these examples has; in-memory examples are not
    # read by column.
    own = {"task_name": "tsv", "text_a_column": 0, "label_column": 1}
    if self.labels is None:
      return dict(own, regression=True)
    return dict(own, labels=list(self.labels))

  def _split_data(self, x, y):
    """run_classifier.py's InputExamples of the inputs."""
    inputs = self._inputs(x)
    count = len(inputs["text_a"])
    labels = self._label_names(y, count)
    # The SavedModel takes text_b when the model was trained on pairs.
    self.exporter.options["text_b"] = "text_b" in inputs
    text_b = inputs.get("text_b", [None] * count)
    return [
      InputExample("api-%d" % i, a, b, label)
      for i, (a, b, label) in enumerate(zip(inputs["text_a"], text_b, labels))
    ]

  def _features(self, x, y):
    # run_classifier.py's featurizer (with its WordPiece tokenizer).
    rows = [
      convert_single_example(
        e, self.labels, self.max_seq_length, self.tokenizer
      )
      for e in self._split_data(x, y)
    ]
    label_type = np.float32 if self.labels is None else np.int32
    return dict(
      stacked(rows, INPUTS + ("is_real_example",)),
      **stacked(rows, (), label_type, label_ids="label_id"),
    )

  def _result(self, row):
    if self.labels is None:
      return {"score": float(row["predictions"])}
    label = row["label"].decode()  # the arg-max label, as the SavedModel's
    probabilities = row["probabilities"].tolist()
    return {
      "label": label,
      "score": probabilities[self.labels.index(label)],
      "probabilities": dict(zip(self.labels, probabilities)),
    }

  def _raw(self, rows):
    key = "predictions" if self.labels is None else "probabilities"
    return np.stack([row[key] for row in rows])

  def _metrics(self, rows, batch_size):
    return classifier_results.eval_results(
      self.head["task_name"],
      rows,
      batch_size,
      self.labels is None,
      self.global_step,
    )


def _score(index, value):
  """A regression label (a number, or its text) as a float; an InputError
  naming it otherwise."""
  try:
    score = float(np.float32(value))
  except (TypeError, ValueError):
    score = None
  if isinstance(value, bool) or score is None or not np.isfinite(score):
    raise InputError(
      "label %d: %s is not a finite number" % (index, shown(value))
    )
  return score
