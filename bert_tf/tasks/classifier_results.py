"""run_classifier's result files from the rows `Trainer.predict` yields.

Each row is the `ClassifierModel` output of one eval/predict record plus its
`label_ids` and `is_real_example`. TPU padding rows (`is_real_example=0`)
are left out of every metric and output line, as in the original.

Example:
    rows = list(trainer.predict(dataset, 8,
                                feature_keys=("label_ids", "is_real_example")))
    results = eval_results("mrpc", rows, 8, False, trainer.global_step)
    lines = list(prediction_lines(rows))
"""

import numpy as np

from bert_tf.tasks import glue_metrics
from bert_tf.tasks.result_files import format_value


def _column(rows, key, dtype=None):
  return np.asarray([row[key] for row in rows], dtype=dtype)


def _real(rows):
  return [row for row in rows if row["is_real_example"]]


def _scores(rows, is_regression):
  return _column(rows, "predictions" if is_regression else "probabilities")


def metric_names(task_name, is_regression, multi_labels=None):
  """The keys of `eval_results` but global_step (for --best_metric)."""
  if multi_labels:
    names = glue_metrics.multi_label_metric_names(multi_labels)
  else:
    names = [
      "eval_" + name
      for name in glue_metrics.metric_names(task_name, is_regression)
    ]
  return names + ["eval_loss", "loss"]


def eval_results(
  task_name,
  rows,
  eval_batch_size,
  is_regression,
  global_step,
  multi_labels=None,
):
  """The metrics of eval_results.txt.

  * `eval_loss`: mean per-example loss over the real rows (weighted mean of
    the original);
  * `loss`: the Estimator's mean of the batch losses, where a batch loss
    averages every row of its `eval_batch_size` batch (TPU padding rows too,
    as the original model_fn did);
  * the task's GLUE metrics (`eval_accuracy` for every classification task;
    F1, Matthews corr., Pearson/Spearman where GLUE uses them); for a
    multi-label task (`multi_labels`: the label names) micro/macro F1,
    subset accuracy and one F1 per label;
  * `global_step`.
  """
  if not rows:
    raise ValueError("no eval rows")
  losses = _column(rows, "per_example_loss", np.float64)
  real = _column(rows, "is_real_example") != 0
  scores, labels = _scores(rows, is_regression), _column(rows, "label_ids")
  if multi_labels:
    results = glue_metrics.multi_label_metrics(
      scores, labels, multi_labels, real
    )
  else:
    results = glue_metrics.compute_metrics(
      task_name, scores, labels, real, is_regression=is_regression
    )
  batch_losses = [
    losses[i : i + eval_batch_size].mean()
    for i in range(0, len(losses), eval_batch_size)
  ]
  results.update(
    eval_loss=float(losses[real].mean()),
    loss=float(np.mean(batch_losses)),
    global_step=int(global_step),
  )
  return results


def prediction_lines(rows, is_regression=False):
  """test_results.tsv: per real row, the class probabilities in label order
  (tab-separated, `str` of float32 like the original; multi-label: each
  label's own probability) or the score."""
  for row in _real(rows):
    if is_regression:
      yield format_value(row["predictions"]) + "\n"
    else:
      yield "\t".join(format_value(p) for p in row["probabilities"]) + "\n"


def glue_submission_lines(rows, label_list=None):
  """A GLUE submission file: `index<TAB>prediction` with a header; the
  predicted label's name, or the score for regression (`label_list` None)."""
  yield "index\tprediction\n"
  for index, row in enumerate(_real(rows)):
    if label_list is None:
      prediction = format_value(row["predictions"])
    else:
      prediction = label_list[int(np.argmax(row["probabilities"]))]
    yield "%d\t%s\n" % (index, prediction)
