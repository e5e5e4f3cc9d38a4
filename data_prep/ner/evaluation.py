"""Predicted tags per word, entity-level metrics and the predictions files.

Metrics come from `seqeval` in its default mode, which counts entities as
the CoNLL `conlleval` script does (an `I-X` after `O` or another type starts
an entity): micro precision, recall and F1 over all entities, and the same
per entity type.

Example:
    tags = word_tags(windows, [row["predictions"] for row in rows],
                     sentences, labels)
    results = entity_metrics([s.tags for s in sentences], tags, "eval")
    results["eval_f1"], results["eval_f1_PER"]
    # eval_results.txt: the same and eval_loss, global_step.
    tags, results = tag_results(windows, rows, sentences, labels, "eval", 343)
    lines = prediction_lines(sentences, tags)  # "EU B-ORG B-ORG\\n", ...
"""

import warnings

import numpy as np
from seqeval.metrics import classification_report

_AVERAGES = ("micro avg", "macro avg", "weighted avg")


def word_tags(windows, window_predictions, sentences, labels):
  """Each sentence's predicted tags, word by word.

  Args:
    windows: the featurized Windows, in record order.
    window_predictions: per window, the predicted label id of each position.
    sentences: the Sentences the windows were made from.
    labels: the label list (id -> tag).
  """
  tags = [[None] * len(s.words) for s in sentences]
  for window, ids in zip(windows, window_predictions, strict=True):
    for position, word in window.predicted:
      tags[window.sentence][word] = labels[int(ids[position])]
  for sentence, sentence_tags in zip(sentences, tags):
    if None in sentence_tags:  # Featurizer guarantees one window per word.
      raise AssertionError(
        "%s:%d: word without prediction"
        % (sentence.path, sentence.lines[sentence_tags.index(None)])
      )
  return tags


def entity_metrics(gold, predicted, prefix):
  """{prefix_precision, prefix_recall, prefix_f1 (micro, all entities), and
  prefix_precision_TYPE, ... per entity type} from lists of tag lists."""
  with warnings.catch_warnings():
    # Without any entity, seqeval's unused averages warn about empty means.
    warnings.simplefilter("ignore", RuntimeWarning)
    report = classification_report(
      gold, predicted, output_dict=True, zero_division=0
    )
  results = {}
  for name, row in report.items():
    suffix = "" if name == "micro avg" else "_" + name
    if name in _AVERAGES and suffix:
      continue
    results[prefix + "_precision" + suffix] = float(row["precision"])
    results[prefix + "_recall" + suffix] = float(row["recall"])
    results[prefix + "_f1" + suffix] = float(row["f1-score"])
  return results


def tag_results(windows, rows, sentences, labels, prefix, global_step):
  """(each sentence's predicted tags, results) of a split: `entity_metrics`,
  `prefix_loss` (the weighted mean token loss) and `global_step`; results
  None for sentences without tags.

  Args:
    windows: the featurized Windows, in record order.
    rows: per window, the model's `predictions` and `loss_sum` and the
      window's `label_weights`.
    sentences, labels: as `word_tags`.
    prefix: "eval" or "test".
    global_step: the model's training step.
  """
  tags = word_tags(windows, [r["predictions"] for r in rows], sentences, labels)
  if sentences[0].tags is None:
    return tags, None
  results = entity_metrics([s.tags for s in sentences], tags, prefix)
  results[prefix + "_loss"] = np.sum([r["loss_sum"] for r in rows]) / max(
    np.sum([r["label_weights"] for r in rows]), 1.0
  )
  results["global_step"] = global_step
  return tags, results


def metric_names(labels, prefix):
  """Every key `entity_metrics` can return for these labels (a type's keys
  appear when the type is in the gold or predicted tags)."""
  types = sorted({label[2:] for label in labels if label[:2] in ("B-", "I-")})
  return [
    "%s_%s%s" % (prefix, name, suffix)
    for suffix in [""] + ["_" + t for t in types]
    for name in ("precision", "recall", "f1")
  ]


def prediction_lines(sentences, predicted):
  """`word gold predicted` lines (`word predicted` for an unlabelled file),
  a blank line after each sentence; gold tags are IOB2."""
  lines = []
  for sentence, tags in zip(sentences, predicted, strict=True):
    gold = sentence.tags or [None] * len(tags)
    for word, gold_tag, tag in zip(sentence.words, gold, tags):
      fields = (word, tag) if gold_tag is None else (word, gold_tag, tag)
      lines.append(" ".join(fields) + "\n")
    lines.append("\n")
  return lines
