"""`SpanExtractor`: run_squad.py's model (SQuAD) over raw text.

Example:
    import bert_tf
    squad = bert_tf.SpanExtractor.from_pretrained("bert-tiny")
    x = [("Who wrote it?", "It was written by Ann Lee in 1990.")]
    squad.fit(x, [("Ann Lee", 18)], epochs=2, batch_size=1)
    squad.predict(x)              # ["ann lee"]
    squad.evaluate(x, [("Ann Lee", 18)])   # eval_loss over the windows
    squad.save_run("/tmp/squad_run")       # run_squad.py reads it

An example is (question, context); a label is (answer text, its character
offset in the context), or None for "no answer" (SQuAD 2.0,
`version_2_with_negative=True`). Features are the exporter's in-graph
doc-stride windows; an answer's pieces are its words' pieces narrowed to
the answer text's own tokenization (the original `_improve_answer_span`),
and a window that does not hold the answer points at [CLS], as
run_squad.py trains. Prediction is the exporter's n-best search; the
official EM / F1 are data_prep/squad's (`run_squad.py --do_predict`).
"""

import bisect

import numpy as np
import tensorflow as tf

from bert_tf.api.base import strings
from bert_tf.api.base import TaskApi
from bert_tf.io_utils import InputError
from bert_tf.tasks.squad import SquadTask

_SEQUENCE = ("doc_stride", "max_query_length")


class SpanExtractor(TaskApi):
  """The answer span of a question in a context."""

  KIND = "squad"
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
    if isinstance(x, (str, bytes)) or any(
      not isinstance(e, (tuple, list)) or len(e) != 2 for e in x
    ):
      raise InputError("inputs: a list of (question, context) pairs")
    self.config.check_segments(True, "inputs")
    return {
      "question": strings([e[0] for e in x], "question"),
      "context": strings([e[1] for e in x], "context"),
    }

  def _answer_tokens(self, doc, y):
    """Per example (first, last) context piece of its answer, or None."""
    y = list(y)
    if len(y) != len(doc["words"]):
      raise InputError("%d inputs but %d answers" % (len(doc["words"]), len(y)))
    texts = [a[0] if a else "" for a in y]
    answer_ids = self.exporter.tokenizer(tf.constant(texts or [""])).to_list()
    spans = []
    for i, answer in enumerate(y):
      if answer is None:
        spans.append(None)
        continue
      if not isinstance(answer, (tuple, list)) or len(answer) != 2:
        raise InputError(
          "answer %r: not (text, character offset) or None" % (answer,)
        )
      text, offset = answer
      starts = doc["word_starts"][i]
      if not text.strip() or not starts or not 0 <= offset < 1 << 31:
        raise InputError("answer %r: empty, or no context" % (answer,))
      first = bisect.bisect_right(starts, offset) - 1
      last = bisect.bisect_right(starts, offset + len(text) - 1) - 1
      words = doc["token_words"][i]
      start = words.index(max(first, 0))
      end = len(words) - 1 - words[::-1].index(last)
      spans.append(_improve(doc["ids"][i], start, end, answer_ids[i]))
    return spans

  def _features(self, x, y):
    inputs = self._inputs(x)
    doc, windows, features = self.exporter.encode_windows(
      **{k: tf.constant(v) for k, v in inputs.items()}
    )
    doc = {
      k: doc[k].to_list()
      for k in ("word_starts", "token_words", "ids", "words")
    }
    spans = self._answer_tokens(doc, y)
    windows = {
      k: windows[k].numpy()
      for k in ("example", "start", "length", "query_length")
    }
    positions = np.zeros([len(windows["example"]), 2], np.int32)
    for w, example in enumerate(windows["example"]):
      span, start = spans[example], windows["start"][w]
      if span and start <= span[0] and span[1] < start + windows["length"][w]:
        positions[w] = np.array(span) - start + windows["query_length"][w] + 2
    features = {k: v.numpy() for k, v in features.items()}
    features["start_positions"] = positions[:, 0]
    features["end_positions"] = positions[:, 1]
    return features

  def _results(self, outputs):
    return [a.decode() for part in outputs for a in part["answer"]]

  def _metrics(self, rows, batch_size):
    del batch_size  # a mean over windows
    start = np.stack([r["start_logits"] for r in rows])
    end = np.stack([r["end_logits"] for r in rows])
    loss = self.task.loss(
      {
        "start_positions": np.array([r["start_positions"] for r in rows]),
        "end_positions": np.array([r["end_positions"] for r in rows]),
      },
      {"start_logits": start, "end_logits": end},
    )
    return {"eval_loss": float(loss), "global_step": self.global_step}

  def evaluate(self, x, y, batch_size=8):
    """The mean span loss over the windows (see the module docstring)."""
    return self._metrics(
      self._rows(
        self._features(x, y), batch_size, ("start_positions", "end_positions")
      ),
      batch_size,
    )


def _improve(doc_ids, start, end, answer_ids):
  """The original `_improve_answer_span`: the tightest piece span within
  [start, end] that is exactly the answer's own tokenization."""
  for new_start in range(start, end + 1):
    for new_end in range(end, new_start - 1, -1):
      if doc_ids[new_start : new_end + 1] == answer_ids:
        return new_start, new_end
  return start, end
