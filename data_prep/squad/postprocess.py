"""Start/end logits -> SQuAD answers, as the original `write_predictions`.

Per example: the `n_best_size` best start and end indexes of every feature
(stable sort), discarding pairs outside the document part, not max-context
at the start, reversed, or longer than `max_answer_length`; in v2 the null
candidate of the feature with the lowest `start[0] + end[0]`; candidates
sorted by summed logit, mapped back to the context with `get_final_text`,
de-duplicated by text, cut at `n_best_size`; a softmax (float64,
`math.exp`) over the n-best; v2 predicts "" when
`null score - best non-null score > null_score_diff_threshold`. Files are
`json.dumps(..., indent=4) + "\\n"`, byte-identical to the original's.

With `sentencepiece=True` (features from a SentencePiece model, new), the
candidate's pieces are joined at their word-boundary marks and projected
back onto the context through SentencePiece's own normalisation
(`preprocess_text`) instead of `BasicTokenizer`; the projection rules are
the same.

DEVIATION: in v2, when no non-null candidate survives (the n-best holds only
""), the original crashes (`best_non_null_entry` is None). Here the
prediction is "" and its null odds are `score_null - 0.0`, i.e. the missing
non-null answer scores 0.0 like the original's "empty" fallback entry.

Example:
    preds = compute_predictions(examples, features, results, 20, 30, True,
                                version_2_with_negative=True)
    write_prediction_files(preds, output_dir)
"""

import collections
import functools
import json
import math
import os

from bert_tf.io_utils import atomic_output
from bert_tf.io_utils import InputError
from bert_tf.tokenizers import tokenization
from bert_tf.tokenizers.sentencepiece_tokenizer import pieces_to_text
from bert_tf.tokenizers.sentencepiece_tokenizer import preprocess_text

# All predictions of a file, by question id, in example order.
# best_non_null: the text used when the null answer is not chosen.
Predictions = collections.namedtuple(
  "Predictions", ["predictions", "nbest", "null_odds", "best_non_null"]
)

_Prelim = collections.namedtuple(
  "_Prelim",
  ["feature_index", "start_index", "end_index", "start_logit", "end_logit"],
)
_Nbest = collections.namedtuple("_Nbest", ["text", "start_logit", "end_logit"])


def _best_indexes(logits, n_best_size):
  ranked = sorted(enumerate(logits), key=lambda x: x[1], reverse=True)
  return [index for index, _ in ranked[:n_best_size]]


def _strip_spaces(text):
  """Text without " ", and a map from its positions to `text`'s."""
  ns_to_s_map = {}
  ns_chars = []
  for i, c in enumerate(text):
    if c == " ":
      continue
    ns_to_s_map[len(ns_chars)] = i
    ns_chars.append(c)
  return "".join(ns_chars), ns_to_s_map


@functools.lru_cache(maxsize=65536)
def _basic_tokenized(orig_text, do_lower_case):
  # n-best candidates of one example share many context windows.
  return " ".join(
    tokenization.BasicTokenizer(do_lower_case=do_lower_case).tokenize(orig_text)
  )


def get_final_text(pred_text, orig_text, do_lower_case, sentencepiece=False):
  """Projects tokenized `pred_text` back onto `orig_text` (the original's)."""
  if sentencepiece:
    tok_text = preprocess_text(orig_text, do_lower_case)
  else:
    tok_text = _basic_tokenized(orig_text, do_lower_case)
  start_position = tok_text.find(pred_text)
  if start_position == -1:
    return orig_text
  end_position = start_position + len(pred_text) - 1
  orig_ns_text, orig_ns_to_s_map = _strip_spaces(orig_text)
  tok_ns_text, tok_ns_to_s_map = _strip_spaces(tok_text)
  if len(orig_ns_text) != len(tok_ns_text):
    return orig_text
  tok_s_to_ns_map = {s: ns for ns, s in tok_ns_to_s_map.items()}
  orig_start = orig_ns_to_s_map.get(tok_s_to_ns_map.get(start_position))
  orig_end = orig_ns_to_s_map.get(tok_s_to_ns_map.get(end_position))
  if orig_start is None or orig_end is None:
    return orig_text
  return orig_text[orig_start : (orig_end + 1)]


def compute_softmax(scores):
  """Max-subtracted softmax in Python floats, as the original."""
  if not scores:
    return []
  max_score = max(scores)
  exp_scores = [math.exp(score - max_score) for score in scores]
  total_sum = 0.0
  for x in exp_scores:
    total_sum += x
  return [x / total_sum for x in exp_scores]


def _prelim_predictions(
  features, results, n_best_size, max_answer_length, version_2_with_negative
):
  """Valid (start, end) candidates of all features, plus the null one."""
  prelims = []
  score_null = 1000000
  null = (0, 0, 0)  # feature index, start logit, end logit
  for feature_index, (feature, result) in enumerate(zip(features, results)):
    if version_2_with_negative:
      feature_null_score = result.start_logits[0] + result.end_logits[0]
      if feature_null_score < score_null:
        score_null = feature_null_score
        null = (feature_index, result.start_logits[0], result.end_logits[0])
    num_tokens = len(feature.tokens)
    doc_map = feature.token_to_orig_map
    ends = _best_indexes(result.end_logits, n_best_size)
    for start in _best_indexes(result.start_logits, n_best_size):
      if (
        start >= num_tokens
        or start not in doc_map
        or not feature.token_is_max_context.get(start, False)
      ):
        continue
      for end in ends:
        if (
          end >= num_tokens
          or end not in doc_map
          or end < start
          or end - start + 1 > max_answer_length
        ):
          continue
        prelims.append(
          _Prelim(
            feature_index,
            start,
            end,
            result.start_logits[start],
            result.end_logits[end],
          )
        )
  if version_2_with_negative:
    prelims.append(_Prelim(null[0], 0, 0, null[1], null[2]))
  prelims.sort(key=lambda x: x.start_logit + x.end_logit, reverse=True)
  return prelims, score_null, null


def _candidate_text(example, feature, prelim, do_lower_case, sentencepiece):
  pieces = feature.tokens[prelim.start_index : (prelim.end_index + 1)]
  if sentencepiece:
    tok_text = pieces_to_text(pieces)
  else:
    tok_text = " ".join(pieces).replace(" ##", "").replace("##", "")
  tok_text = " ".join(tok_text.strip().split())
  orig_start = feature.token_to_orig_map[prelim.start_index]
  orig_end = feature.token_to_orig_map[prelim.end_index]
  orig_text = " ".join(example.doc_tokens[orig_start : (orig_end + 1)])
  return get_final_text(tok_text, orig_text, do_lower_case, sentencepiece)


def _example_nbest(
  example,
  features,
  results,
  n_best_size,
  max_answer_length,
  do_lower_case,
  version_2_with_negative,
  sentencepiece,
):
  """(nbest entries, score_null) of one example."""
  prelims, score_null, null = _prelim_predictions(
    features, results, n_best_size, max_answer_length, version_2_with_negative
  )
  seen = set()
  nbest = []
  for prelim in prelims:
    if len(nbest) >= n_best_size:
      break
    if prelim.start_index > 0:  # a non-null prediction
      text = _candidate_text(
        example,
        features[prelim.feature_index],
        prelim,
        do_lower_case,
        sentencepiece,
      )
      if text in seen:
        continue
    else:  # the null candidate is never dropped as a duplicate
      text = ""
    seen.add(text)
    nbest.append(_Nbest(text, prelim.start_logit, prelim.end_logit))
  if version_2_with_negative and "" not in seen:
    nbest.append(_Nbest("", null[1], null[2]))
  if not nbest:
    nbest.append(_Nbest("empty", 0.0, 0.0))
  return nbest, score_null


def compute_predictions(
  all_examples,
  all_features,
  all_results,
  n_best_size,
  max_answer_length,
  do_lower_case,
  version_2_with_negative=False,
  null_score_diff_threshold=0.0,
  sentencepiece=False,
):
  """The original's write_predictions without the writing -> Predictions."""
  by_example = collections.defaultdict(list)
  for feature in all_features:
    by_example[feature.example_index].append(feature)
  by_id = {result.unique_id: result for result in all_results}
  out = Predictions({}, {}, {}, {})
  for example_index, example in enumerate(all_examples):
    features = by_example[example_index]
    try:
      results = [by_id[feature.unique_id] for feature in features]
    except KeyError as e:
      raise InputError(
        "no raw result for unique_id %s (question %s)" % (e, example.qas_id)
      ) from None
    nbest, score_null = _example_nbest(
      example,
      features,
      results,
      n_best_size,
      max_answer_length,
      do_lower_case,
      version_2_with_negative,
      sentencepiece,
    )
    probs = compute_softmax([e.start_logit + e.end_logit for e in nbest])
    out.nbest[example.qas_id] = [
      collections.OrderedDict(
        [
          ("text", e.text),
          ("probability", p),
          ("start_logit", e.start_logit),
          ("end_logit", e.end_logit),
        ]
      )
      for e, p in zip(nbest, probs)
    ]
    best = next((e for e in nbest if e.text), None)
    if not version_2_with_negative:
      out.predictions[example.qas_id] = nbest[0].text
      continue
    if best is None:  # DEVIATION: the original crashes here.
      best = _Nbest("", 0.0, 0.0)
    out.null_odds[example.qas_id] = (
      score_null - best.start_logit - best.end_logit
    )
    out.best_non_null[example.qas_id] = best.text
  if version_2_with_negative:
    apply_threshold(out, null_score_diff_threshold)
  return out


def apply_threshold(predictions, null_score_diff_threshold):
  """(Re)sets the v2 answers: "" where the null odds exceed the threshold."""
  for qas_id, score_diff in predictions.null_odds.items():
    predictions.predictions[qas_id] = (
      ""
      if score_diff > null_score_diff_threshold
      else predictions.best_non_null[qas_id]
    )


def _dump(path, obj):
  with atomic_output(path) as f:
    f.write(json.dumps(obj, indent=4) + "\n")


def write_prediction_files(predictions, output_dir):
  """Writes predictions.json, nbest_predictions.json, null_odds.json (v2)."""
  _dump(os.path.join(output_dir, "predictions.json"), predictions.predictions)
  _dump(os.path.join(output_dir, "nbest_predictions.json"), predictions.nbest)
  if predictions.null_odds:
    _dump(os.path.join(output_dir, "null_odds.json"), predictions.null_odds)


def write_eval_results(output_dir, metrics):
  """eval_results.json (indent 2), and the metrics as one line on stdout."""
  with atomic_output(os.path.join(output_dir, "eval_results.json")) as f:
    f.write(json.dumps(metrics, indent=2) + "\n")
  print(json.dumps(metrics))


def write_predictions(
  all_examples,
  all_features,
  all_results,
  n_best_size,
  max_answer_length,
  do_lower_case,
  output_dir,
  version_2_with_negative=False,
  null_score_diff_threshold=0.0,
  sentencepiece=False,
):
  """compute_predictions + write_prediction_files; returns the Predictions."""
  predictions = compute_predictions(
    all_examples,
    all_features,
    all_results,
    n_best_size,
    max_answer_length,
    do_lower_case,
    version_2_with_negative,
    null_score_diff_threshold,
    sentencepiece,
  )
  write_prediction_files(predictions, output_dir)
  return predictions
