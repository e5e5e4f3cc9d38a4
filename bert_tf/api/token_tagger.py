"""`TokenTagger`: run_ner.py's model (CoNLL-style NER) over raw text.

Example:
    import bert_tf
    tagger = bert_tf.TokenTagger.from_pretrained(
        "bert-tiny", labels=["O", "B-PER", "I-PER", "B-LOC", "I-LOC"])
    words = [["John", "lives", "in", "Paris"]]
    tagger.fit(words, [["B-PER", "O", "O", "B-LOC"]], epochs=3, batch_size=1)
    tagger.predict(["Mary lives in Rome"])
    # [{"words": ["Mary", "lives", "in", "Rome"],
    #   "tags": ["B-PER", "O", "O", "B-LOC"],
    #   "entities": [{"type": "PER", "text": "Mary", "first_word": 0,
    #                 "last_word": 0}, {"type": "LOC", ...}]}]
    tagger.predict(["Mary lives in Rome"], raw=True)  # [["B-PER", ...]]
    tagger.evaluate(words, tags)            # eval_f1, eval_precision, ...
    tagger.save_run("/tmp/ner_run")         # run_ner.py reads it

Inputs are texts (split at white space; an empty one is tagged with
nothing) or word lists; labels are one IOB2 tag per word, and `predict`
gives each input's words, tags and entities (IOB2 chunks as seqeval counts
them; word indices inclusive). fit and evaluate use run_ner.py's windows
(data_prep/ner's Featurizer: a word's tag on its first piece, long
sentences in overlapping windows, each word trained and predicted once) and
evaluate its results (`data_prep.ner.evaluation.tag_results`, as
eval_results.txt). Each input is a sentence of its own document. Prediction
is the exporter's, over the same windows.
"""

import numpy as np

from bert_tf.api.base import TaskApi
from bert_tf.api.inputs import examples
from bert_tf.api.inputs import shown
from bert_tf.api.inputs import strings
from bert_tf.api.inputs import text
from bert_tf.io_utils import InputError
from bert_tf.jobs import ner as ner_job
from bert_tf.tasks.ner import NerTask
from data_prep.ner import conll
from data_prep.ner import evaluation
from data_prep.ner.features import Featurizer
from data_prep.ner.records import window_values


class TokenTagger(TaskApi):
  """One IOB2 tag per word."""

  KIND = "ner"
  JOB = ner_job.NerJob
  CONFIG = ner_job.NerConfig

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
    return NerTask(
      self.config,
      len(self.labels),
      self.max_seq_length,
      self.head.get("feature_mode", "fine_tune"),
      self.head.get("lstm_units", 768),
    )

  def _words(self, x):
    """Each input's words: a text split at white space, or a word list."""
    words = []
    for i, sentence in enumerate(examples(x, "texts or word lists")):
      if isinstance(sentence, (str, bytes)):
        words.append(text(sentence, "input %d" % i).split())
        continue
      if not isinstance(sentence, (tuple, list, np.ndarray)):
        raise InputError(
          "input %d: %s is neither a text nor a word list"
          % (i, shown(sentence))
        )
      sentence = strings(sentence, "input %d's word %%d" % i).tolist()
      # An empty word would be the serving signature's padding.
      blank = [j for j, word in enumerate(sentence) if not word.strip()]
      if blank:
        raise InputError("input %d's word %d: a blank word" % (i, blank[0]))
      words.append(sentence)
    return words

  def _inputs(self, x):
    words = self._words(x)
    longest = max(len(s) for s in words)
    padded = np.empty((len(words), longest), dtype=object)
    for row, sentence in zip(padded, words):
      row[:] = sentence + [""] * (longest - len(sentence))
    return {"words": padded}

  def _serving(self, names):
    del names  # always word lists
    return self.exporter.serve_words, {"words": [None, None]}

  def _job_settings(self):
    return {
      "labels": ",".join(self.labels),
      "feature_mode": self.head.get("feature_mode", "fine_tune"),
      "lstm_units": self.head.get("lstm_units", 768),
    }

  def _split_data(self, x, y):
    """run_ner.py's Sentences of labelled inputs."""
    words = self._words(x)
    y = list(y)
    if len(words) != len(y):
      raise InputError("%d inputs but %d tag lists" % (len(words), len(y)))
    known = set(self.labels)
    for i, (sentence, tags) in enumerate(zip(words, y)):
      if not sentence:
        raise InputError("input %d: no words to learn from" % i)
      if isinstance(tags, (str, bytes)) or not isinstance(
        tags, (tuple, list, np.ndarray)
      ):
        raise InputError("tags %d: %s is not a list of tags" % (i, shown(tags)))
      if len(sentence) != len(tags):
        raise InputError(
          "tags %d: %d tags for %d words" % (i, len(tags), len(sentence))
        )
      bad = [
        j
        for j, tag in enumerate(tags)
        if not isinstance(tag, str) or tag not in known
      ]
      if bad:
        raise InputError(
          "tags %d: tag %d %s is not one of labels=%s"
          % (i, bad[0], shown(tags[bad[0]]), ",".join(self.labels))
        )
    return [
      conll.Sentence(w, list(t), i, list(range(1, len(w) + 1)), "input %d" % i)
      for i, (w, t) in enumerate(zip(words, y))
    ]

  def _windows(self, x, y):
    """(Sentences, run_ner.py's Windows of them) of labelled inputs."""
    sentences = self._split_data(x, y)
    # document_context is the exporter's serving choice; run_ner.py records
    # none in its run, and each input is its own document here.
    featurizer = Featurizer(self.tokenizer, self.labels, self.max_seq_length)
    return sentences, featurizer.windows(sentences)

  def _features(self, x, y):
    return self._arrays(self._windows(x, y)[1])

  def _arrays(self, windows):
    """{feature: numpy array} of Windows, as their records hold them."""
    values = [window_values(w, self.max_seq_length) for w in windows]
    return {
      name: np.array(
        [v[name] for v in values],
        np.float32 if name == "label_weights" else np.int32,
      )
      for name in values[0]
    }

  def _result(self, row):
    count, found = int(row["num_words"]), int(row["num_entities"])
    return {
      "words": [w.decode() for w in row["words"][:count]],
      "tags": [t.decode() for t in row["tags"][:count]],
      "entities": [
        {
          "type": row["entity_type"][j].decode(),
          "text": row["entity_text"][j].decode(),
          "first_word": int(row["entity_start"][j]),
          "last_word": int(row["entity_end"][j]) - 1,
        }
        for j in range(found)
      ],
    }

  def _raw(self, rows):
    return [
      [t.decode() for t in row["tags"][: row["num_words"]]] for row in rows
    ]

  def evaluate(self, x, y, batch_size=8):
    """run_ner.py's eval_results.txt: entity-level micro precision / recall
    / F1 and per entity type (seqeval, as conlleval), eval_loss and
    global_step."""
    sentences, windows = self._windows(x, y)
    rows = self._rows(self._arrays(windows), batch_size, ("label_weights",))
    return evaluation.tag_results(
      windows, rows, sentences, self.labels, "eval", self.global_step
    )[1]
