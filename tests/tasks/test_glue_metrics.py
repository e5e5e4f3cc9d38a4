"""GLUE metrics against values computed by hand on fixed predictions."""

import math

import numpy as np
import pytest

from bert_tf.tasks.glue_metrics import compute_metrics

# TP = 3 (rows 0, 4, 6), FN = 2 (1, 7), FP = 1 (3), TN = 2 (2, 5).
LABELS = [1, 1, 0, 0, 1, 0, 1, 1]
PREDS = [1, 0, 0, 1, 1, 0, 1, 0]
ACCURACY = 5 / 8
F1 = 2 * 3 / (2 * 3 + 1 + 2)
MCC = (3 * 2 - 1 * 2) / math.sqrt((3 + 1) * (3 + 2) * (2 + 1) * (2 + 2))


def test_cola_mcc():
  assert compute_metrics("cola", PREDS, LABELS) == pytest.approx(
    {"eval_accuracy": ACCURACY, "eval_mcc": MCC}
  )


@pytest.mark.parametrize("task", ["mrpc", "QQP"])
def test_f1_tasks(task):
  assert compute_metrics(task, PREDS, LABELS) == pytest.approx(
    {"eval_accuracy": ACCURACY, "eval_f1": F1}
  )


@pytest.mark.parametrize(
  "task", ["sst-2", "mnli", "mnli-mm", "qnli", "rte", "wnli", "xnli", "tsv"]
)
def test_accuracy_tasks(task):
  assert compute_metrics(task, PREDS, LABELS) == pytest.approx(
    {"eval_accuracy": ACCURACY}
  )


def test_logits_are_argmaxed_and_padding_is_ignored():
  logits = np.eye(2)[PREDS] * 3.0 - 1.0
  # Two padding rows, both wrong: they must not count.
  logits = np.concatenate([logits, [[5.0, 0.0], [5.0, 0.0]]])
  labels = LABELS + [1, 1]
  real = [1] * 8 + [0, 0]
  assert compute_metrics("mrpc", logits, labels, real) == pytest.approx(
    {"eval_accuracy": ACCURACY, "eval_f1": F1}
  )
  assert compute_metrics("mrpc", logits, labels)["eval_accuracy"] == 0.5


def test_stsb_pearson_spearman():
  # x deviations (-1.5, -.5, .5, 1.5), y deviations (-3, 0, -1, 4):
  # r = 10 / sqrt(5 * 26); ranks of y are 1 3 2 4 -> rho = 1 - 6*2/(4*15).
  scores = [[1.0], [2.0], [3.0], [4.0], [0.0]]
  gold = [2.0, 5.0, 4.0, 9.0, 4.0]
  assert compute_metrics("sts-b", scores, gold, [1, 1, 1, 1, 0]) == (
    pytest.approx({"eval_pearson": 10 / math.sqrt(130), "eval_spearmanr": 0.8})
  )


def test_regression_tsv_and_prefix():
  result = compute_metrics(
    "tsv", [1, 2, 3, 4], [2, 5, 4, 9], is_regression=True, prefix="eval_mm_"
  )
  assert result == pytest.approx(
    {"eval_mm_pearson": 10 / math.sqrt(130), "eval_mm_spearmanr": 0.8}
  )


def test_constant_prediction_gives_nan_correlation():
  result = compute_metrics("stsb", [1.0, 1.0, 1.0], [1.0, 2.0, 3.0])
  assert math.isnan(result["eval_pearson"])


def test_shape_mismatch_and_no_real_rows():
  with pytest.raises(ValueError, match="differ in shape"):
    compute_metrics("rte", [0, 1], [0, 1, 1])
  with pytest.raises(ValueError, match="no real examples"):
    compute_metrics("rte", [0, 1], [0, 1], [0, 0])
