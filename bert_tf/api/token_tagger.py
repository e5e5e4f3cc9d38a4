"""`TokenTagger`: run_ner.py's model (CoNLL-style NER) over raw text.

Example:
    import bert_tf
    tagger = bert_tf.TokenTagger.from_pretrained(
        "bert-tiny", labels=["O", "B-PER", "I-PER", "B-LOC", "I-LOC"])
    words = [["John", "lives", "in", "Paris"]]
    tagger.fit(words, [["B-PER", "O", "O", "B-LOC"]], epochs=3, batch_size=1)
    tagger.predict(["Mary lives in Rome"])  # [["B-PER", "O", "O", "B-LOC"]]
    tagger.evaluate(words, tags)            # eval_f1, eval_precision, ...
    tagger.save_run("/tmp/ner_run")         # run_ner.py reads it

Inputs are texts (split at white space) or word lists; results and labels
are one IOB2 tag per word. Prediction is the exporter's: run_ner.py's
overlapping windows, each word from its first piece in its max-context
window. Training features put a word's tag on its first piece; a sentence
longer than max_seq_length - 2 pieces is cut into consecutive windows of
whole words (run_ner.py's windows overlap, for context).
"""

import numpy as np
from seqeval.metrics import f1_score
from seqeval.metrics import precision_score
from seqeval.metrics import recall_score
import tensorflow as tf

from bert_tf.api.base import strings
from bert_tf.api.base import TaskApi
from bert_tf.export.base import vocab_tokens
from bert_tf.io_utils import InputError
from bert_tf.tasks.tagging import TaggingTask


class TokenTagger(TaskApi):
  """One IOB2 tag per word."""

  KIND = "ner"

  @classmethod
  def _settings(cls, given, recorded):
    unknown = set(given) - {"labels"}
    if unknown:
      raise InputError("TokenTagger: unknown argument %s" % sorted(unknown)[0])
    labels = given.get("labels")
    if recorded is not None:
      if labels is not None and list(labels) != recorded.head["labels"]:
        raise InputError(
          "labels=%s: the run's model has labels=%s"
          % (",".join(labels), ",".join(recorded.head["labels"]))
        )
      return recorded.head, recorded.sequence
    if not labels:
      raise InputError("TokenTagger needs labels= (IOB2 tags, O first)")
    return (
      {"labels": list(labels), "feature_mode": "fine_tune"},
      {"document_context": False},
    )

  @property
  def labels(self):
    return self.head["labels"]

  def _options(self):
    return {
      "labels": self.labels,
      "feature_mode": self.head.get("feature_mode", "fine_tune"),
      "lstm_units": self.head.get("lstm_units", 768),
    }

  def _task(self):
    return TaggingTask(
      self.config,
      len(self.labels),
      self.max_seq_length,
      self.head.get("feature_mode", "fine_tune"),
      self.head.get("lstm_units", 768),
    )

  def _words(self, x):
    if isinstance(x, (str, bytes)):
      raise InputError("inputs: a list of texts or word lists, not one text")
    return [
      strings(s.split() if isinstance(s, str) else s, "words").tolist()
      for s in x
    ]

  def _inputs(self, x):
    words = self._words(x)
    longest = max(len(s) for s in words)
    return {
      "words": np.array(
        [s + [""] * (longest - len(s)) for s in words], dtype=object
      )
    }

  def _serving(self, names):
    del names  # always word lists
    return self.exporter.serve_words, {"words": [None, None]}

  def _features(self, x, y):
    words, tags = self._words(x), [list(t) for t in y]
    ids = {label: i for i, label in enumerate(self.labels)}
    for sentence, sentence_tags in zip(words, tags):
      if len(sentence) != len(sentence_tags):
        raise InputError(
          "%d words but %d tags: %r"
          % (len(sentence), len(sentence_tags), sentence)
        )
      bad = [t for t in sentence_tags if t not in ids]
      if bad:
        raise InputError(
          "tag %r: not one of labels=%s" % (bad[0], ",".join(self.labels))
        )
    if len(words) != len(tags):
      raise InputError("%d inputs but %d tag lists" % (len(words), len(tags)))
    unk = vocab_tokens(self.vocab_file).index("[UNK]")
    capacity = self.max_seq_length - 2
    pieces = self.exporter.tokenizer(
      tf.constant([w for s in words for w in s])
    ).to_list()
    windows, at = [], 0
    for sentence_tags in tags:
      window = ([], [])
      for tag in sentence_tags:
        word = pieces[at][:capacity] or [unk]
        at += 1
        if len(window[0]) + len(word) > capacity:
          windows.append(window)
          window = ([], [])
        window[0].extend(word)
        window[1].extend([ids[tag]] + [-1] * (len(word) - 1))
      windows.append(window)
    return self._pack(windows)

  def _pack(self, windows):
    """[CLS] pieces [SEP], zero-padded; a tag (weight 1) on first pieces."""
    length = self.max_seq_length
    features = {
      k: np.zeros([len(windows), length], np.int32)
      for k in ("input_ids", "input_mask", "segment_ids", "label_ids")
    }
    features["label_weights"] = np.zeros([len(windows), length], np.float32)
    tokenizer = self.exporter.tokenizer
    for row, (ids, labels) in enumerate(windows):
      n = len(ids) + 2
      features["input_ids"][row, :n] = (
        [tokenizer.cls_id] + ids + [tokenizer.sep_id]
      )
      features["input_mask"][row, :n] = 1
      labels = np.array([-1] + labels + [-1])
      features["label_ids"][row, :n] = np.maximum(labels, 0)
      features["label_weights"][row, :n] = labels >= 0
    return features

  def _results(self, outputs):
    return [
      [t.decode() for t in tags[:n]]
      for part in outputs
      for tags, n in zip(part["tags"], part["num_words"])
    ]

  def evaluate(self, x, y, batch_size=8):
    """run_ner.py's entity-level micro precision / recall / F1 (seqeval,
    as conlleval) and eval_loss."""
    gold = [list(t) for t in y]
    predicted = self.predict(x, batch_size)
    rows = self._rows(self._features(x, y), batch_size, ("label_weights",))
    return {
      "eval_precision": float(precision_score(gold, predicted)),
      "eval_recall": float(recall_score(gold, predicted)),
      "eval_f1": float(f1_score(gold, predicted)),
      "eval_loss": float(
        np.sum([r["loss_sum"] for r in rows])
        / max(np.sum([r["label_weights"] for r in rows]), 1.0)
      ),
      "global_step": self.global_step,
    }
