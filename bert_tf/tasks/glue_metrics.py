"""Per-task GLUE metrics, for eval_results.txt.

GLUE scores CoLA by Matthews correlation, MRPC and QQP by F1 (positive
class = label id 1) and accuracy, STS-B by Pearson and Spearman correlation,
and every other task (SST-2, MNLI matched and mismatched, QNLI, RTE, WNLI,
XNLI, a user's tsv task) by accuracy. Classification tasks always report
eval_accuracy, as the original run_classifier does. Rows whose
is_real_example is 0 (TPU padding) are left out, as the original's metric
weights do.

The fake-news pair task (WSDM 2019 Cup, ByteDance, on Kaggle) adds the
competition's weighted categorization accuracy: each example weighs by its
true label (agreed 1/15, disagreed 1/5, unrelated 1/16, the published
weights), and the score is the weight of the correct examples over the
total weight.

Multi-label tasks (a 0/1 label vector per example, new) are scored by
`multi_label_metrics`: per-label F1 and micro/macro F1 over labels whose
sigmoid probability is > 0.5, and subset accuracy (the whole set right).

Example:
    compute_metrics("mrpc", logits, label_ids, is_real_example)
    # {"eval_accuracy": 0.84, "eval_f1": 0.88}
    compute_metrics("fakenews", logits, label_ids)
    # {"eval_accuracy": 0.8, "eval_weighted_accuracy": 0.7}
    compute_metrics("sts-b", scores, label_scores)
    # {"eval_pearson": 0.87, "eval_spearmanr": 0.86}
    multi_label_metrics(probabilities, label_vectors, ["LOC", "PER"])
    # {"eval_micro_f1": .., "eval_macro_f1": .., "eval_f1_LOC": .., ...}
"""

import functools
import warnings

import numpy as np
from scipy import stats
from sklearn import metrics

# The fake-news task's weights in its label-id order (agreed, disagreed,
# unrelated); tests/data_prep/classifier/test_fakenews.py pins the order to
# data_prep's label list.
FAKENEWS_WEIGHTS = (1 / 15, 1 / 5, 1 / 16)


def _weighted_accuracy(labels, predictions):
  weights = np.asarray(FAKENEWS_WEIGHTS)[labels.astype(np.int64)]
  return metrics.accuracy_score(labels, predictions, sample_weight=weights)


_METRICS = {
  "accuracy": metrics.accuracy_score,
  "weighted_accuracy": _weighted_accuracy,
  "f1": metrics.f1_score,
  "mcc": metrics.matthews_corrcoef,
  "pearson": lambda y, p: stats.pearsonr(y, p)[0],
  "spearmanr": lambda y, p: stats.spearmanr(y, p)[0],
}

_TASK_METRICS = {
  "cola": ("accuracy", "mcc"),
  "mrpc": ("accuracy", "f1"),
  "qqp": ("accuracy", "f1"),
  "stsb": ("pearson", "spearmanr"),
  "fakenews": ("accuracy", "weighted_accuracy"),
}
_REGRESSION_METRICS = ("pearson", "spearmanr")


def _canonical(task_name):
  """ "STS-B", "sts_b" and "stsb" name the same task."""
  return task_name.lower().replace("-", "").replace("_", "")


def metric_names(task_name, is_regression=None):
  """The metrics reported for a task, without the eval_ prefix.

  Args:
    task_name: a GLUE/XNLI task name, "fakenews" or "tsv".
    is_regression: overrides the task's kind (needed for a regression tsv
      task); None means "as the task defines", i.e. only STS-B regresses.
  """
  task = _canonical(task_name)
  if is_regression:
    return _REGRESSION_METRICS
  names = _TASK_METRICS.get(task, ("accuracy",))
  if is_regression is False and names == _REGRESSION_METRICS:
    raise ValueError("task %s is a regression task" % task_name)
  return names


def compute_metrics(
  task_name,
  predictions,
  labels,
  is_real_example=None,
  is_regression=None,
  prefix="eval_",
):
  """Returns {prefix + metric: float} over the real examples.

  Args:
    task_name: see `metric_names`.
    predictions: class ids [N], class scores [N, K] (argmax is taken), or
      regression scores [N] / [N, 1].
    labels: label ids [N], or true scores for regression.
    is_real_example: optional [N] 0/1; rows with 0 are ignored.
    is_regression: see `metric_names`.
    prefix: key prefix, e.g. "eval_mm_" for a second (mismatched) dev set.
  """
  names = metric_names(task_name, is_regression)
  predictions = np.asarray(predictions)
  labels = np.asarray(labels).reshape(-1)
  if names == _REGRESSION_METRICS:
    predictions = predictions.reshape(-1).astype(np.float64)
    labels = labels.astype(np.float64)
  elif predictions.ndim == 2:
    predictions = predictions.argmax(axis=-1)
  if predictions.shape != labels.shape:
    raise ValueError(
      "predictions %s and labels %s differ in shape"
      % (predictions.shape, labels.shape)
    )
  if is_real_example is not None:
    real = np.asarray(is_real_example).reshape(-1) != 0
    predictions, labels = predictions[real], labels[real]
  if not labels.size:
    raise ValueError("no real examples to score")
  with warnings.catch_warnings():
    # A constant prediction makes a correlation undefined: report nan.
    warnings.simplefilter("ignore", stats.ConstantInputWarning)
    return {
      prefix + name: float(_METRICS[name](labels, predictions))
      for name in names
    }


def multi_label_metric_names(label_names, prefix="eval_"):
  """The keys `multi_label_metrics` returns."""
  return [
    prefix + "micro_f1",
    prefix + "macro_f1",
    prefix + "subset_accuracy",
  ] + ["%sf1_%s" % (prefix, label) for label in label_names]


def multi_label_metrics(
  probabilities,
  labels,
  label_names,
  is_real_example=None,
  threshold=0.5,
  prefix="eval_",
):
  """Returns {prefix + metric: float} over the real examples.

  Args:
    probabilities: [N, K] per-label probabilities; > threshold predicts it.
    labels: [N, K] 0/1 true label sets.
    label_names: the K label names, for the per-label keys.
    is_real_example: optional [N] 0/1; rows with 0 are ignored.
    threshold: decision threshold on each probability.
    prefix: key prefix.
  """
  predicted = (np.asarray(probabilities) > threshold).astype(np.int64)
  labels = np.asarray(labels).astype(np.int64)
  if predicted.shape != labels.shape or labels.shape[1:] != (len(label_names),):
    raise ValueError(
      "probabilities %s, labels %s and %d label names differ "
      "in shape" % (predicted.shape, labels.shape, len(label_names))
    )
  if is_real_example is not None:
    real = np.asarray(is_real_example).reshape(-1) != 0
    predicted, labels = predicted[real], labels[real]
  if not labels.size:
    raise ValueError("no real examples to score")
  # A label never true nor predicted has F1 0 (sklearn's zero_division).
  f1 = functools.partial(metrics.f1_score, labels, predicted, zero_division=0)
  results = {
    prefix + "micro_f1": float(f1(average="micro")),
    prefix + "macro_f1": float(f1(average="macro")),
    prefix + "subset_accuracy": float(
      metrics.accuracy_score(labels, predicted)
    ),
  }
  for name, value in zip(label_names, f1(average=None)):
    results["%sf1_%s" % (prefix, name)] = float(value)
  return results
