"""Entity metrics against counts made by hand on a fixed predictions file,
and the predictions-file layout."""

import pytest

from data_prep.ner import conll
from data_prep.ner import evaluation
from tests.conftest import FIXTURES

PREDICTIONS = FIXTURES / "ner" / "predictions.txt"


def _columns():
  sentences = [
    block.splitlines()
    for block in PREDICTIONS.read_text().strip().split("\n\n")
  ]
  rows = [[line.split() for line in sentence] for sentence in sentences]
  return (
    [[r[0] for r in s] for s in rows],
    [[r[1] for r in s] for s in rows],
    [[r[2] for r in s] for s in rows],
  )


def test_entity_metrics_match_hand_counts():
  _, gold, predicted = _columns()
  results = evaluation.entity_metrics(gold, predicted, "eval")
  # Gold: PER Anna Berg, John Smith; LOC New York, Rome; ORG World Bank;
  # MISC French (6). Predicted: PER Anna Berg (right), John, Smith (the
  # B-/I- boundary error: two wrong entities); LOC New York, Rome (I-LOC
  # after O starts an entity, as conlleval counts it: right); ORG World Bank
  # (right); MISC officials (wrong). 7 predicted, 4 right.
  precision, recall = 4 / 7, 4 / 6
  expected = {
    "eval_precision": precision,
    "eval_recall": recall,
    "eval_f1": 2 * precision * recall / (precision + recall),  # 8/13
    "eval_precision_PER": 1 / 3,
    "eval_recall_PER": 1 / 2,
    "eval_f1_PER": 0.4,
    "eval_precision_LOC": 1.0,
    "eval_recall_LOC": 1.0,
    "eval_f1_LOC": 1.0,
    "eval_precision_ORG": 1.0,
    "eval_recall_ORG": 1.0,
    "eval_f1_ORG": 1.0,
    "eval_precision_MISC": 0.0,
    "eval_recall_MISC": 0.0,
    "eval_f1_MISC": 0.0,
  }
  assert results == pytest.approx(expected)
  assert results["eval_f1"] == pytest.approx(8 / 13)


def test_no_entities_at_all():
  results = evaluation.entity_metrics([["O", "O"]], [["O", "O"]], "test")
  assert results == {"test_precision": 0.0, "test_recall": 0.0, "test_f1": 0.0}


def test_prediction_lines_layout():
  words, gold, predicted = _columns()
  sentences = [conll.Sentence(w, g, 0, None, "x") for w, g in zip(words, gold)]
  lines = evaluation.prediction_lines(sentences, predicted)
  assert "".join(lines) == PREDICTIONS.read_text()
  unlabelled = [s._replace(tags=None) for s in sentences[:1]]
  assert evaluation.prediction_lines(unlabelled, predicted[:1])[:2] == [
    "Anna B-PER\n",
    "Berg I-PER\n",
  ]
