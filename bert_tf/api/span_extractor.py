"""`SpanExtractor`: run_squad.py's model (SQuAD) over raw text.

Example:
    import bert_tf
    squad = bert_tf.SpanExtractor.from_pretrained("bert-tiny")
    x = [("Who wrote it?", "It was written by Ann Lee in 1990.")]
    squad.fit(x, [("Ann Lee", 18)], epochs=2, batch_size=1)
    squad.predict(x)
    # [{"answer": "Ann Lee", "start_char": 18, "end_char": 25, "score": 9.1}]
    squad.predict(x, raw=True)    # ["Ann Lee"]
    squad.evaluate(x, [("Ann Lee", 18)])   # exact_match, f1 (+ eval_loss)
    squad.save_run("/tmp/squad_run")       # run_squad.py reads it

An example is (question, context); a label is (answer text, its character
offset in the context), or None for "no answer" (SQuAD 2.0,
`version_2_with_negative=True`). A label whose text is not at its offset
(white space aside) is refused, naming its index. fit and evaluate run
run_squad.py's data path on `squad_data(x, y)`, the SQuAD JSON of the
examples: its example reader (character offsets -> words; an answer its
word comparison does not find, e.g. after a no-break space, is not trained
on, as in the original), its doc-stride featurizer, and for evaluate its n-best
post-processing of the logits and the official evaluation, so that
`evaluate` returns eval_results.json's metrics. Prediction is the
exporter's in-graph n-best search: `start_char` / `end_char` slice the
context to the answer (whose words the original joins with single spaces;
-1 without an answer), `score` is the best span's start +
end logit and, for a v2 model, `null_score` the no-answer logits'.
"""

import numpy as np

from bert_tf.api.base import INPUTS
from bert_tf.api.base import stacked
from bert_tf.api.base import TaskApi
from bert_tf.api.inputs import examples
from bert_tf.api.inputs import shown
from bert_tf.api.inputs import strings
from bert_tf.api.inputs import text
from bert_tf.io_utils import InputError
from bert_tf.jobs import squad as squad_job
from bert_tf.tasks.squad import SquadTask
from data_prep.squad import evaluation as squad_evaluation
from data_prep.squad import postprocess as squad_postprocess
from data_prep.squad import raw_results
from data_prep.squad.example import data_examples
from data_prep.squad.features import convert_examples_to_features

_SEQUENCE = ("doc_stride", "max_query_length")
_SOURCE = "inputs"  # how errors name the examples


def _pairs(x):
  """(questions, contexts) of a list of (question, context) pairs."""
  x = examples(x, "(question, context) pairs")
  for i, example in enumerate(x):
    if not isinstance(example, (tuple, list)) or len(example) != 2:
      raise InputError(
        "input %d: %s is not a (question, context) pair" % (i, shown(example))
      )
  return (
    strings([e[0] for e in x], "input %d's question"),
    strings([e[1] for e in x], "input %d's context"),
  )


def _answer(index, answer, context):
  """{"text", "answer_start"} of a (text, character offset) label, once
  the text is at that offset of the context (white space may differ: the
  original reader compares words)."""
  where = "answer %d" % index
  if not isinstance(answer, (tuple, list)) or len(answer) != 2:
    raise InputError(
      "%s: %s is not (text, character offset) or None" % (where, shown(answer))
    )
  answer_text, start = text(answer[0], where), answer[1]
  if not answer_text.strip():
    raise InputError("%s: the answer text is blank" % where)
  if isinstance(start, bool) or not isinstance(start, (int, np.integer)):
    raise InputError(
      "%s: offset %s is not a character offset (an int)" % (where, shown(start))
    )
  start, end = int(start), int(start) + len(answer_text)
  if start < 0 or end > len(context):
    raise InputError(
      "%s: %s at character %d is outside its context (%d characters)"
      % (where, shown(answer_text), start, len(context))
    )
  if context[start:end].split() != answer_text.split():
    found = context.find(answer_text)
    raise InputError(
      "%s: %s is not at character %d of its context (%s)"
      % (
        where,
        shown(answer_text),
        start,
        "it is at %d" % found if found >= 0 else "nor anywhere in it",
      )
    )
  return {"text": answer_text, "answer_start": start}


def squad_data(x, y, version_2_with_negative=False):
  """The SQuAD JSON "data" list of labelled (question, context) pairs: a
  paragraph per pair, question ids "0", "1", ... As a --predict_file
  ({"version": ..., "data": ...}) run_squad.py scores what `evaluate` does.
  """
  questions, contexts = _pairs(x)
  y = list(y)
  if len(y) != len(questions):
    raise InputError("%d inputs but %d answers" % (len(questions), len(y)))
  paragraphs = []
  for i, answer in enumerate(y):
    qa = {"id": str(i), "question": questions[i]}
    if answer is None:
      if not version_2_with_negative:
        raise InputError(
          "answer %d: None (no answer) needs a model with "
          "version_2_with_negative=True" % i
        )
      qa["answers"] = []
    else:
      qa["answers"] = [_answer(i, answer, contexts[i])]
    if version_2_with_negative:
      qa["is_impossible"] = answer is None
    paragraphs.append({"context": contexts[i], "qas": [qa]})
  return [{"title": _SOURCE, "paragraphs": paragraphs}]


class SpanExtractor(TaskApi):
  """The answer span of a question in a context."""

  KIND = "squad"
  JOB = squad_job.SquadJob
  CONFIG = squad_job.SquadConfig
  DEFAULT_MAX_SEQ_LENGTH = 384

  @classmethod
  def _settings(cls, given, recorded):
    names = _SEQUENCE + ("version_2_with_negative",)
    unknown = set(given) - set(names)
    if unknown:
      raise InputError(
        "SpanExtractor: unknown argument %s" % sorted(unknown)[0]
      )
    # run_squad.py records no head; these are the windows' settings (and
    # how the answer is chosen).
    sequence = {
      "doc_stride": 128,
      "max_query_length": 64,
      "version_2_with_negative": False,
    }
    sequence.update(recorded.sequence if recorded else {})
    sequence.update({k: given[k] for k in names if k in given})
    return {}, sequence

  def _options(self):
    return dict(self.sequence)

  def _task(self):
    return SquadTask(self.config, self.max_seq_length)

  def _inputs(self, x):
    questions, contexts = _pairs(x)
    self.config.check_segments(True, "inputs")
    return {"question": questions, "context": contexts}

  @property
  def _v2(self):
    return self.sequence["version_2_with_negative"]

  def _examples(self, data, is_training):
    """run_squad.py's SquadExamples of `data` (training: with answers)."""
    return data_examples(data, _SOURCE, is_training, self._v2)[0]

  def _squad_features(self, examples, is_training):
    """run_squad.py's InputFeatures (doc-stride windows) of `examples`."""
    self.config.check_segments(True, "inputs")
    features = []
    convert_examples_to_features(
      examples,
      self.tokenizer,
      self.max_seq_length,
      self.sequence["doc_stride"],
      self.sequence["max_query_length"],
      is_training,
      features.append,
    )
    return features

  def _job_settings(self):
    return dict(self.sequence)

  def _split_data(self, x, y):
    """The SQuAD JSON "data" list of the inputs (`squad_data`)."""
    data = squad_data(x, y, self._v2)
    if not self._examples(data, True):
      raise InputError("no answer of the inputs was found in its context")
    return data

  def _features(self, x, y):
    examples = self._examples(squad_data(x, y, self._v2), True)
    if not examples:
      raise InputError("no answer of the inputs was found in its context")
    return _arrays(self._squad_features(examples, True), True)

  def _result(self, row):
    result = {
      "answer": row["answer"].decode(),
      "start_char": int(row["start_char"]),
      "end_char": int(row["end_char"]),
      "score": float(row["score"]),
    }
    if "null_score" in row:
      result["null_score"] = float(row["null_score"])
    return result

  def _raw(self, rows):
    return [row["answer"].decode() for row in rows]

  def evaluate(self, x, y, batch_size=8):
    """eval_results.json of run_squad.py --do_predict on these examples
    (v1: exact_match, f1; v2: exact, f1, HasAns_* / NoAns_*, best_*), plus
    eval_loss (the mean span loss over the windows of the answers found in
    their context) and global_step."""
    data = squad_data(x, y, self._v2)
    training = self._examples(data, True)  # also checks the answers
    examples = self._examples(data, False)
    features = self._squad_features(examples, False)
    rows = {
      int(row["unique_ids"]): row
      for row in self._rows(
        _arrays(features, False), batch_size, ("unique_ids",)
      )
    }
    # tolist(): the float32 values as Python floats, as run_squad.py has them.
    results = [
      raw_results.RawResult(
        uid, row["start_logits"].tolist(), row["end_logits"].tolist()
      )
      for uid, row in rows.items()
    ]
    options = self.exporter.options
    predictions = squad_postprocess.compute_predictions(
      examples,
      features,
      results,
      options["n_best_size"],
      options["max_answer_length"],
      self.do_lower_case,
      self._v2,
      options["null_score_diff_threshold"],
    )
    metrics = squad_evaluation.evaluate_predictions(data, predictions, self._v2)
    loss = self._loss(training, features, rows)
    if loss is not None:
      metrics["eval_loss"] = loss
    metrics["global_step"] = self.global_step
    return metrics

  def _loss(self, training, features, rows):
    """The span loss of the eval windows that have training labels (the
    same windows: the training features of the same questions)."""
    labels = {
      (f.qas_id, f.doc_span_index): (f.start_position, f.end_position)
      for f in self._squad_features(training, True)
    }
    keys = [(f.qas_id, f.doc_span_index) for f in features]
    picked = [
      (labels[key], rows[f.unique_id])
      for key, f in zip(keys, features)
      if key in labels
    ]
    if not picked:
      return None
    positions = np.array([p for p, _ in picked], np.int32)
    loss = self.task.loss(
      {"start_positions": positions[:, 0], "end_positions": positions[:, 1]},
      {
        "start_logits": np.stack([r["start_logits"] for _, r in picked]),
        "end_logits": np.stack([r["end_logits"] for _, r in picked]),
      },
    )
    return float(loss)


def _arrays(features, is_training):
  """{feature: numpy array} of InputFeatures, as SquadTask reads them."""
  arrays = dict(
    stacked(features, INPUTS),
    **stacked(features, (), np.int64, unique_ids="unique_id"),
  )
  if is_training:
    arrays.update(
      stacked(
        features,
        (),
        start_positions="start_position",
        end_positions="end_position",
      )
    )
  return arrays
