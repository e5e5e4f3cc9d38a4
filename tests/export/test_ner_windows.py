"""In-graph NER windows vs data_prep.ner.features (core windows, growth by
context words, max-context owners) on random sentences and documents, and
in-graph entity chunks vs seqeval's `get_entities`."""

import itertools
import random

from seqeval.metrics.sequence_labeling import get_entities
import tensorflow as tf

from bert_tf.export import ner_windows
from data_prep.ner.features import core_windows
from data_prep.ner.features import extend
from data_prep.ner.features import owners

_windows = tf.function(
  ner_windows.sentence_windows,
  input_signature=[tf.TensorSpec([None], tf.int32)]
  + [tf.TensorSpec([], tf.int32)] * 3,
)


def _python(lengths, capacity, first, last):
  offsets = list(itertools.accumulate(lengths, initial=0))
  spans = [
    extend(first + start, first + end, lengths, capacity)
    for start, end in core_windows(lengths[first:last], capacity)
  ]
  return spans, owners(spans, first, last, offsets)


def _graph(lengths, capacity, first, last):
  starts, ends, owner = _windows(
    tf.constant(lengths, tf.int32), capacity, first, last
  )
  return (
    list(zip(starts.numpy().tolist(), ends.numpy().tolist())),
    owner.numpy().tolist(),
  )


def test_windows_match_featurizer():
  rng = random.Random(0)
  for _ in range(150):
    capacity = rng.randint(1, 12)
    sentences = [rng.randint(1, 9) for _ in range(rng.randint(1, 4))]
    lengths = [rng.randint(1, capacity) for _ in range(sum(sentences))]
    first = 0
    for size in sentences:  # each sentence of the stream (document)
      last = first + size
      want = _python(lengths, capacity, first, last)
      assert _graph(lengths, capacity, first, last) == want, (
        lengths,
        capacity,
        first,
        last,
      )
      first = last
    # One sentence alone (no context).
    alone = lengths[: sentences[0]]
    assert _graph(alone, capacity, 0, len(alone)) == _python(
      alone, capacity, 0, len(alone)
    )
  assert _graph([], 4, 0, 0) == ([], [])


def test_entities_match_seqeval():
  rng = random.Random(1)
  labels = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
  rows = [
    [rng.choice(labels) for _ in range(rng.randint(0, 8))] for _ in range(200)
  ]
  first, end, kind = ner_windows.entities(tf.ragged.constant(rows, tf.string))
  for tags, starts, ends, kinds in zip(
    rows, first.to_list(), end.to_list(), kind.to_list()
  ):
    got = [(k.decode(), s, e - 1) for k, s, e in zip(kinds, starts, ends)]
    assert got == sorted(get_entities(tags), key=lambda x: x[1]), tags
