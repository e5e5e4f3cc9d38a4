"""Multi-label classification: sigmoid head + mean binary cross-entropy, and
its metrics, against values computed by hand."""

import math

import numpy as np
import pytest

from bert_tf.modeling.bert_config import BertConfig
from bert_tf.tasks.classification import ClassifierModel
from bert_tf.tasks.classifier_results import eval_results
from bert_tf.tasks.classifier_results import metric_names
from bert_tf.tasks.classifier_results import prediction_lines
from bert_tf.tasks.glue_metrics import multi_label_metrics

NAMES = ["LOC", "ORG", "PER"]
# Row by row (prediction = probability > 0.5):
#   true {LOC, PER}  predicted {LOC}       -> LOC TP, PER FN
#   true {}          predicted {ORG}       -> ORG FP (PER 0.5 is not > 0.5)
#   true {ORG}       predicted {ORG, PER}  -> ORG TP, PER FP
#   true {PER}       predicted {PER}       -> PER TP (subset match)
PROBS = [[0.9, 0.1, 0.4], [0.2, 0.7, 0.5], [0.0, 0.8, 0.6], [0.3, 0.2, 0.9]]
LABELS = [[1, 0, 1], [0, 0, 0], [0, 1, 0], [0, 0, 1]]


def test_metrics_by_hand():
  # TP/FP/FN per label: LOC 1/0/0, ORG 1/1/0, PER 1/1/1; overall 3/2/1.
  expected = {
    "eval_micro_f1": 2 * 3 / (2 * 3 + 2 + 1),
    "eval_macro_f1": (1.0 + 2 / 3 + 1 / 2) / 3,
    "eval_subset_accuracy": 1 / 4,
    "eval_f1_LOC": 1.0,
    "eval_f1_ORG": 2 / 3,
    "eval_f1_PER": 1 / 2,
  }
  assert multi_label_metrics(PROBS, LABELS, NAMES) == pytest.approx(expected)
  # Padding rows are left out; a label never true nor predicted scores 0.
  results = multi_label_metrics(
    PROBS + [[0.9, 0.9, 0.9]], LABELS + [[0, 0, 0]], NAMES, [1, 1, 1, 1, 0]
  )
  assert results == pytest.approx(expected)
  assert (
    multi_label_metrics([[0.1, 0.2, 0.3]], [[0, 0, 1]], NAMES)["eval_f1_LOC"]
    == 0.0
  )


def test_eval_results_and_prediction_lines():
  rows = [
    {
      "probabilities": np.asarray(p, np.float32),
      "label_ids": l,
      "per_example_loss": np.float32(i),
      "is_real_example": 1,
    }
    for i, (p, l) in enumerate(zip(PROBS, LABELS))
  ]
  results = eval_results("tsv", rows, 2, False, 9, multi_labels=NAMES)
  assert sorted(results) == sorted(
    metric_names("tsv", False, NAMES) + ["global_step"]
  )
  assert results["eval_loss"] == 1.5 and results["global_step"] == 9
  assert next(prediction_lines(rows)) == "0.9\t0.1\t0.4\n"


def test_sigmoid_head_and_binary_cross_entropy():
  config = BertConfig(
    vocab_size=30,
    hidden_size=8,
    num_hidden_layers=1,
    num_attention_heads=2,
    intermediate_size=16,
  )
  model = ClassifierModel(config, 3, multi_label=True)
  rng = np.random.RandomState(0)
  features = {
    "input_ids": rng.randint(1, 30, size=(2, 5)),
    "input_mask": np.ones((2, 5), np.int32),
    "segment_ids": np.zeros((2, 5), np.int32),
    "label_ids": np.array([[1, 0, 1], [0, 0, 0]], np.int32),
  }
  outputs = model(features, training=False)
  logits = outputs["logits"].numpy()
  np.testing.assert_allclose(
    outputs["probabilities"], 1 / (1 + np.exp(-logits)), rtol=1e-6
  )
  for row, labels in zip(range(2), features["label_ids"]):
    expected = np.mean(
      [
        -math.log(1 / (1 + math.exp(-x)))
        if y
        else -math.log(1 - 1 / (1 + math.exp(-x)))
        for x, y in zip(logits[row], labels)
      ]
    )
    loss = float(outputs["per_example_loss"][row])
    assert loss == pytest.approx(expected, rel=1e-5)
  assert sorted(model.tf1_variables())[-2:] == ["output_bias", "output_weights"]
