"""`predict`'s named results against its raw ones (`raw=True`, the
SavedModel's answer), on the tiny fixture model with its heads as
initialized: whatever the model predicts, each named field must be the raw
output it names (the arg-max label's name and probability, the answer's
place in its context, the IOB2 chunks of the tags as seqeval finds them).
"""

import json

import keras
import numpy as np
import pytest
from seqeval.metrics.sequence_labeling import get_entities

import bert_tf

_TEXTS = ["the cat sat", "stocks fell sharply", "it rains", "red car"]
_TAGS = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
# Capitals and a non-ASCII letter: the answer is cased context text and
# offsets count code points; the second context needs several windows.
_CONTEXTS = [
  "The book was written by Ann Lee in Paris in 1990.",
  "Café Noir opened in Lyon. " * 3 + "It was run by Marie Roux for years.",
]


def _plain(results):
  """JSON round trip: the results are plain Python values."""
  assert json.loads(json.dumps(results)) == results
  return results


@pytest.fixture(autouse=True)
def _seed():
  keras.utils.set_random_seed(3)  # the heads' initial weights


def test_classifier_results_name_the_raw_probabilities(tiny_folder):
  labels = ["neg", "pos", "mixed"]
  clf = bert_tf.TextClassifier.from_pretrained(
    tiny_folder, labels=labels, max_seq_length=16
  )
  raw = clf.predict(_TEXTS, raw=True)
  results = _plain(clf.predict(_TEXTS, batch_size=3))
  assert raw.shape == (4, 3) and len(results) == 4
  for result, row in zip(results, raw):
    assert result == {
      "label": labels[int(np.argmax(row))],
      "score": float(row.max()),
      "probabilities": dict(zip(labels, row.tolist())),
    }


def test_regression_results_are_the_raw_scores(tiny_folder):
  clf = bert_tf.TextClassifier.from_pretrained(
    tiny_folder, num_labels=1, max_seq_length=16
  )
  raw = clf.predict(_TEXTS, raw=True)
  assert raw.shape == (4,)
  assert _plain(clf.predict(_TEXTS)) == [{"score": float(v)} for v in raw]


def test_multiple_choice_results_name_the_raw_probabilities(tiny_folder):
  mc = bert_tf.MultipleChoice.from_pretrained(
    tiny_folder, num_choices=3, max_seq_length=16
  )
  x = [("She opened the door.", ["walked in.", "ate it.", "flew."])] * 2
  x[1] = ("The dog barked.", "It", ["ran.", "sang.", "slept."])
  raw = mc.predict(x, raw=True)
  results = _plain(mc.predict(x))
  for result, row in zip(results, raw):
    choice = int(np.argmax(row))
    assert result == {
      "choice": choice,
      "score": float(row[choice]),
      "probabilities": row.tolist(),
    }


@pytest.mark.parametrize("v2", [False, True])
def test_span_results_slice_the_context_to_the_answer(tiny_folder, v2):
  squad = bert_tf.SpanExtractor.from_pretrained(
    tiny_folder,
    max_seq_length=32,
    doc_stride=8,
    max_query_length=8,
    version_2_with_negative=v2,
  )
  x = [("who wrote the book?", _CONTEXTS[0]), ("who ran it?", _CONTEXTS[1])]
  x += [("where?", c) for c in _CONTEXTS]
  raw = squad.predict(x, raw=True)
  results = _plain(squad.predict(x, batch_size=3))
  keys = {"answer", "start_char", "end_char", "score"}
  for result, answer, (_, context) in zip(results, raw, x):
    assert set(result) == keys | ({"null_score"} if v2 else set())
    assert result["answer"] == answer
    if result["start_char"] < 0:  # no answer: "" (v2) or "empty" (v1)
      assert answer == ("" if v2 else "empty") and result["end_char"] == -1
    else:
      assert context[result["start_char"] : result["end_char"]] == answer
  if not v2:  # a v1 model answers every context with a span
    assert all(r["start_char"] >= 0 for r in results)


def test_tagger_results_are_words_tags_and_their_entities(tiny_folder):
  tagger = bert_tf.TokenTagger.from_pretrained(
    tiny_folder, labels=_TAGS, max_seq_length=8
  )
  x = [
    "",
    "John Smith went from Paris to Rome with Mary Lee",
    ["Mary", "went", "home"],
    "   ",
  ]
  raw = tagger.predict(x, raw=True)
  results = _plain(tagger.predict(x, batch_size=3))
  empty = {"words": [], "tags": [], "entities": []}
  # Empty sentences are tagged with nothing; the others keep their words.
  assert raw[0] == raw[3] == [] and results[0] == results[3] == empty
  for result, tags, sentence in zip(results[1:3], raw[1:3], x[1:3]):
    words = sentence.split() if isinstance(sentence, str) else sentence
    assert result["words"] == words and result["tags"] == tags
    assert len(tags) == len(words)
    assert result["entities"] == [
      {
        "type": kind,
        "text": " ".join(words[first : last + 1]),
        "first_word": first,
        "last_word": last,
      }
      for kind, first, last in get_entities(tags)
    ]
  # With the heads as initialized some entity is found (else the entity
  # check above checks nothing).
  assert any(r["entities"] for r in results)
  assert tagger.predict([""]) == [empty]
