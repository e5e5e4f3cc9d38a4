"""Official SQuAD v1.1 and v2.0 metrics, computed in-process.

Written from the published definitions of evaluate-v1.1.py and
evaluate-v2.0.py, with the same float arithmetic and summation order, so the
numbers equal the scripts' output:
  * normalisation: lower case, drop ASCII punctuation, drop the words
    a/an/the, collapse whitespace; EM and token F1 maxed over gold answers.
  * v1.1 -> {"exact_match", "f1"}; a missing prediction scores 0.
  * v2.0 -> exact, f1, total, HasAns_*, NoAns_* (gold answers that normalise
    to "" are ignored; no gold answer means the answer is ""); with na_probs
    the scores use the scripts' default na_prob_thresh 1.0, and best_exact /
    best_f1 (+ _thresh) come from the threshold sweep over na_probs.

Example:
    dataset = json.load(open("dev-v2.0.json"))["data"]
    metrics = evaluate(dataset, predictions, na_probs=null_odds)
"""

import collections
import re
import string

from bert_tf.io_utils import InputError

_PUNCTUATION = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)


def normalize_answer(s):
  """Lower text and remove punctuation, articles and extra whitespace."""
  s = "".join(ch for ch in s.lower() if ch not in _PUNCTUATION)
  return " ".join(_ARTICLES.sub(" ", s).split())


def _f1(gold_toks, pred_toks):
  common = collections.Counter(gold_toks) & collections.Counter(pred_toks)
  num_same = sum(common.values())
  if num_same == 0:
    return 0
  precision = 1.0 * num_same / len(pred_toks)
  recall = 1.0 * num_same / len(gold_toks)
  return (2 * precision * recall) / (precision + recall)


def _questions(dataset):
  for article in dataset:
    for paragraph in article["paragraphs"]:
      for qa in paragraph["qas"]:
        yield qa


def evaluate_v1(dataset, predictions):
  """evaluate-v1.1.py: {"exact_match", "f1"} in percent."""
  f1 = exact_match = total = 0
  for qa in _questions(dataset):
    total += 1
    if qa["id"] not in predictions:
      continue
    prediction = normalize_answer(predictions[qa["id"]])
    golds = [normalize_answer(a["text"]) for a in qa["answers"]]
    exact_match += max(prediction == gold for gold in golds)
    f1 += max(_f1(gold.split(), prediction.split()) for gold in golds)
  return {"exact_match": 100.0 * exact_match / total, "f1": 100.0 * f1 / total}


def _v2_f1(gold, pred):
  gold_toks = normalize_answer(gold).split() if gold else []
  pred_toks = normalize_answer(pred).split() if pred else []
  if not gold_toks or not pred_toks:
    # If either is no-answer, F1 is 1 if they agree, 0 otherwise.
    return int(gold_toks == pred_toks)
  return _f1(gold_toks, pred_toks)


def _raw_scores(dataset, predictions):
  exact, f1 = {}, {}
  for qa in _questions(dataset):
    qid = qa["id"]
    golds = [a["text"] for a in qa["answers"] if normalize_answer(a["text"])]
    if not golds:
      golds = [""]
    if qid not in predictions:
      continue
    pred = predictions[qid]
    exact[qid] = max(
      int(normalize_answer(g) == normalize_answer(pred)) for g in golds
    )
    f1[qid] = max(_v2_f1(g, pred) for g in golds)
  return exact, f1


def _apply_na_thresh(scores, na_probs, has_ans, na_prob_thresh):
  return {
    qid: (float(not has_ans[qid]) if na_probs[qid] > na_prob_thresh else s)
    for qid, s in scores.items()
  }


def _eval_dict(exact, f1, qids=None):
  if qids is None:
    total = len(exact)
    return collections.OrderedDict(
      [
        ("exact", 100.0 * sum(exact.values()) / total),
        ("f1", 100.0 * sum(f1.values()) / total),
        ("total", total),
      ]
    )
  total = len(qids)
  return collections.OrderedDict(
    [
      ("exact", 100.0 * sum(exact[k] for k in qids) / total),
      ("f1", 100.0 * sum(f1[k] for k in qids) / total),
      ("total", total),
    ]
  )


def _best_thresh(predictions, scores, na_probs, has_ans):
  num_no_ans = sum(1 for k in has_ans if not has_ans[k])
  cur_score = best_score = num_no_ans
  best_thresh = 0.0
  for qid in sorted(na_probs, key=lambda k: na_probs[k]):
    if qid not in scores:
      continue
    if has_ans[qid]:
      diff = scores[qid]
    else:
      diff = -1 if predictions[qid] else 0
    cur_score += diff
    if cur_score > best_score:
      best_score = cur_score
      best_thresh = na_probs[qid]
  return 100.0 * best_score / len(scores), best_thresh


def evaluate_v2(dataset, predictions, na_probs=None, na_prob_thresh=1.0):
  """evaluate-v2.0.py's output dict (best_* only when na_probs is given)."""
  has_ans = {qa["id"]: bool(qa["answers"]) for qa in _questions(dataset)}
  missing = [qid for qid in has_ans if qid not in predictions]
  if missing:
    raise InputError(
      "no prediction for %d of %d questions (first: %s)"
      % (len(missing), len(has_ans), missing[0])
    )
  probs = na_probs if na_probs is not None else {k: 0.0 for k in predictions}
  missing = [qid for qid in has_ans if qid not in probs]
  if missing:
    raise InputError("no null odds for question %s" % missing[0])
  exact_raw, f1_raw = _raw_scores(dataset, predictions)
  exact = _apply_na_thresh(exact_raw, probs, has_ans, na_prob_thresh)
  f1 = _apply_na_thresh(f1_raw, probs, has_ans, na_prob_thresh)
  out = _eval_dict(exact, f1)
  for prefix, wanted in (("HasAns", True), ("NoAns", False)):
    qids = [k for k, v in has_ans.items() if v == wanted]
    if qids:
      for key, value in _eval_dict(exact, f1, qids).items():
        out["%s_%s" % (prefix, key)] = value
  if na_probs is not None:
    out["best_exact"], out["best_exact_thresh"] = _best_thresh(
      predictions, exact_raw, na_probs, has_ans
    )
    out["best_f1"], out["best_f1_thresh"] = _best_thresh(
      predictions, f1_raw, na_probs, has_ans
    )
  return out


def is_v2_dataset(dataset):
  """True when any question has an `is_impossible` key."""
  return any("is_impossible" in qa for qa in _questions(dataset))


def is_scorable(dataset, version_2_with_negative):
  """True when every question has gold answers to score against.

  That is an `answers` list, non-empty unless v2 (where empty means "no
  answer"): test files, and v1 files with empty lists, are not scorable.
  """
  return all(
    isinstance(qa.get("answers"), list)
    and bool(qa["answers"] or version_2_with_negative)
    for qa in _questions(dataset)
  )


def evaluate(dataset, predictions, na_probs=None, version_2_with_negative=None):
  """Official metrics; v2 when asked, or (None) when the data has
  `is_impossible` or na_probs are given."""
  if version_2_with_negative is None:
    version_2_with_negative = na_probs is not None or is_v2_dataset(dataset)
  try:
    if version_2_with_negative:
      return evaluate_v2(dataset, predictions, na_probs)
    return evaluate_v1(dataset, predictions)
  except (KeyError, TypeError, ValueError) as e:
    raise InputError(
      "the dataset cannot be scored (%s: %s)" % (type(e).__name__, e)
    ) from None


def evaluate_predictions(dataset, predictions, version_2_with_negative):
  """`evaluate` of `postprocess.Predictions` (v2: with their null odds),
  the contents of eval_results.json."""
  return evaluate(
    dataset,
    predictions.predictions,
    predictions.null_odds if version_2_with_negative else None,
    version_2_with_negative,
  )
