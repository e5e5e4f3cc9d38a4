"""write_predictions and the official metrics vs the original's golden files."""

import json

import pytest

from data_prep.squad import evaluation as squad_evaluation
from data_prep.squad.example import load_squad_json
from data_prep.squad.example import SquadExample
from data_prep.squad.features import InputFeatures
from data_prep.squad.postprocess import compute_predictions
from data_prep.squad.postprocess import write_predictions
from data_prep.squad.raw_results import RawResult
from tests.helpers.squad_golden import examples_and_features
from tests.helpers.squad_golden import golden_bytes
from tests.helpers.squad_golden import input_path
from tests.helpers.squad_golden import random_results
from tests.helpers.squad_golden import SQUAD

V1 = "features_v1_eval_384_128_64"
V2 = "features_v2_eval_128_64_32"

# folder -> (features, seq_length, logit boost, threshold, golden predictions)
PREDICTION_CASES = {
  "v1": (V1, 384, 0.0, 0.0, "pred_v1_eval_384/predictions.json.gz"),
  "v2_thr0": (V2, 128, 0.0, 0.0, "pred_v2_eval_128/predictions_thr0.json.gz"),
  "v2_thr-1": (
    V2,
    128,
    0.0,
    -1.0,
    "pred_v2_eval_128/predictions_thr-1.json.gz",
  ),
  "v2_clsboost_thr0": (
    V2,
    128,
    7.0,
    0.0,
    "pred_v2_eval_128_clsboost/predictions_thr0.json.gz",
  ),
  "v2_clsboost_thr-1": (
    V2,
    128,
    7.0,
    -1.0,
    "pred_v2_eval_128_clsboost/predictions_thr-1.json.gz",
  ),
}


@pytest.mark.parametrize("case", sorted(PREDICTION_CASES))
def test_prediction_files_byte_identical(tmp_path, case):
  setting, seq_length, boost, threshold, golden = PREDICTION_CASES[case]
  examples, features = examples_and_features(setting)
  v2 = setting == V2
  write_predictions(
    examples,
    features,
    random_results(features, seq_length, boost),
    20,
    30,
    True,
    str(tmp_path),
    v2,
    threshold,
  )
  folder = golden.split("/")[0]
  assert (tmp_path / "predictions.json").read_bytes() == golden_bytes(golden)
  assert (tmp_path / "nbest_predictions.json").read_bytes() == golden_bytes(
    folder + "/nbest_predictions.json.gz"
  )
  if v2:
    assert (tmp_path / "null_odds.json").read_bytes() == golden_bytes(
      folder + "/null_odds.json.gz"
    )
  else:
    assert not (tmp_path / "null_odds.json").exists()


def test_v1_empty_fallback_count():
  examples, features = examples_and_features(V1)
  preds = compute_predictions(
    examples, features, random_results(features, 384), 20, 30, True
  )
  assert list(preds.predictions.values()).count("empty") == 62  # golden README


EVAL_CASES = [
  (
    "expected_v1.json",
    "small_v1",
    "pred_v1_eval_384/predictions.json.gz",
    None,
  ),
  (
    "expected_v2_thr0.json",
    "small_v2",
    "pred_v2_eval_128/predictions_thr0.json.gz",
    "pred_v2_eval_128",
  ),
  (
    "expected_v2_thr-1.json",
    "small_v2",
    "pred_v2_eval_128/predictions_thr-1.json.gz",
    "pred_v2_eval_128",
  ),
  (
    "expected_v2_clsboost_thr0.json",
    "small_v2",
    "pred_v2_eval_128_clsboost/predictions_thr0.json.gz",
    "pred_v2_eval_128_clsboost",
  ),
  (
    "expected_v2_clsboost_thr-1.json",
    "small_v2",
    "pred_v2_eval_128_clsboost/predictions_thr-1.json.gz",
    "pred_v2_eval_128_clsboost",
  ),
]


@pytest.mark.parametrize("expected,data,preds,null_odds", EVAL_CASES)
def test_official_metrics(expected, data, preds, null_odds):
  na_probs = (
    json.loads(golden_bytes(null_odds + "/null_odds.json.gz"))
    if null_odds
    else None
  )
  got = squad_evaluation.evaluate(
    load_squad_json(input_path(data)), json.loads(golden_bytes(preds)), na_probs
  )
  want = json.loads((SQUAD / "squad_eval" / expected).read_text())
  assert list(got) == list(want)
  for key in want:
    assert got[key] == pytest.approx(want[key], rel=0, abs=1e-9), key


def test_normalize_and_f1_by_hand():
  assert squad_evaluation.normalize_answer("The  Cat, a dog!") == "cat dog"
  data = [
    {
      "paragraphs": [
        {
          "qas": [
            {"id": "q1", "answers": [{"text": "the big cat"}, {"text": "cat"}]},
            {"id": "q2", "answers": [{"text": "red dog"}]},
          ]
        }
      ]
    }
  ]
  # q1: exact (cat); q2: P=1/2, R=1/2 -> F1 0.5.
  got = squad_evaluation.evaluate_v1(data, {"q1": "Cat", "q2": "dog house"})
  assert got == {"exact_match": 50.0, "f1": 75.0}


def _null_only_inputs():
  # One context word; every top index points at [CLS] or the query, so no
  # non-null candidate survives and the n-best holds only "".
  example = SquadExample("q", "why", ["Answer"])
  feature = InputFeatures(
    1000000000,
    0,
    0,
    ["[CLS]", "why", "[SEP]", "answer", "[SEP]"],
    {3: 0},
    {3: True},
    None,
    None,
    None,
  )
  result = RawResult(
    1000000000, [1.0, 5.0, 4.0, -9.0, 0.0], [2.0, 5.0, 4.0, 0.0, -9.0]
  )
  return [example], [feature], [result]


def test_v2_null_only_nbest_does_not_crash():
  examples, features, results = _null_only_inputs()
  preds = compute_predictions(
    examples,
    features,
    results,
    n_best_size=2,
    max_answer_length=30,
    do_lower_case=True,
    version_2_with_negative=True,
    null_score_diff_threshold=100.0,
  )
  assert preds.predictions == {"q": ""}
  assert preds.null_odds == {"q": 3.0}  # score_null 1+2 minus 0.0
  assert [dict(e) for e in preds.nbest["q"]] == [
    {"text": "", "probability": 1.0, "start_logit": 1.0, "end_logit": 2.0}
  ]


def test_missing_raw_result_is_a_clear_error():
  examples, features, _ = _null_only_inputs()
  with pytest.raises(ValueError, match="no raw result for unique_id"):
    compute_predictions(examples, features, [], 20, 30, True)
