"""Word-piece windows: first-piece labels, long sentences as overlapping
windows (every word predicted once, where it has most context), document
context; on real CoNLL-2003 sentences with hand-derived expectations, and
the TFRecord layout parsed back by TensorFlow."""

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.records.task_schemas import ner_schema
from bert_tf.tokenizers import tokenization
from data_prep.ner import conll
from data_prep.ner import evaluation
from data_prep.ner.features import core_windows
from data_prep.ner.features import extend
from data_prep.ner.features import Featurizer
from data_prep.ner.records import write_windows
from tests.conftest import FIXTURES
from tests.helpers.conll import CONLL_DIR
from tests.helpers.conll import requires_conll

LABELS = [
  "O",
  "B-LOC",
  "I-LOC",
  "B-MISC",
  "I-MISC",
  "B-ORG",
  "I-ORG",
  "B-PER",
  "I-PER",
]


@pytest.fixture(scope="module")
def tokenizer():
  return tokenization.FullTokenizer(
    str(FIXTURES / "vocab_uncased.txt"), do_lower_case=True
  )


@pytest.fixture(scope="module")
def train_sentences():
  if CONLL_DIR is None:
    pytest.skip("CoNLL-2003 not found")
  return conll.read_conll(str(CONLL_DIR / "train.txt"))


def _decoded(tokenizer, window):
  """(tokens, {position: tag} of the predicted words, [word indices])."""
  tokens = tokenizer.convert_ids_to_tokens(window.input_ids)
  tags = {p: LABELS[window.label_ids[p]] for p, _ in window.predicted}
  weighted = [p for p, w in enumerate(window.label_weights) if w]
  assert weighted == [p for p, _ in window.predicted]
  assert all(
    window.label_ids[p] == 0 for p in range(len(tokens)) if p not in tags
  )
  return tokens, tags, [w for _, w in window.predicted]


def test_window_helpers_by_hand():
  # 9 one-piece words, room for 6: the second window starts 3 words later.
  assert core_windows([1] * 9, 6) == [(0, 6), (3, 9)]
  # A word longer than the room is a window of its own.
  assert core_windows([2, 7, 1], 6) == [(0, 1), (1, 2), (2, 3)]
  # Room 4 around words 3..4: left, right, left, ...; a side stops at a
  # word that does not fit, the other goes on.
  assert extend(3, 5, [1, 1, 1, 1, 1, 1], 6) == (0, 6)
  assert extend(3, 5, [1] * 9, 6) == (1, 7)
  assert extend(3, 5, [1, 1, 5, 1, 1, 1, 1, 1], 6) == (3, 8)
  assert extend(3, 5, [1, 1, 3, 1, 1, 1, 1, 1], 6) == (2, 6)


@requires_conll
def test_word_split_into_pieces(tokenizer, train_sentences):
  sentence = train_sentences[2]  # BRUSSELS 1996-08-22
  assert sentence.lines[0] == 16
  (window,) = Featurizer(tokenizer, LABELS, 16).windows([sentence])
  tokens, tags, words = _decoded(tokenizer, window)
  assert tokens == ["[CLS]", "brussels", "1996", "-", "08", "-", "22", "[SEP]"]
  assert tags == {1: "B-LOC", 2: "O"} and words == [0, 1]
  assert window.label_weights == [0, 1, 1, 0, 0, 0, 0, 0]


@requires_conll
def test_long_sentence_overlapping_windows(tokenizer, train_sentences):
  # Germany 's representative ... Werner Zwingmann said ... clearer .
  # 31 words, 37 pieces; windows of 18 pieces start at words 0, 8, 15.
  sentence = train_sentences[4]
  assert sentence.lines[0] == 50 and len(sentence.words) == 31
  windows = Featurizer(tokenizer, LABELS, 20).windows([sentence])
  decoded = [_decoded(tokenizer, w) for w in windows]
  assert [d[0] for d in decoded] == [
    (
      "[CLS] germany ' s representative to the european union ' s "
      "veterinary committee werner z ##wing ##mann said on [SEP]"
    ).split(),
    (
      "[CLS] veterinary committee werner z ##wing ##mann said on wednesday "
      "consumers should buy sheep ##me ##at from countries other "
      "[SEP]"
    ).split(),
    (
      "[CLS] consumers should buy sheep ##me ##at from countries other than "
      "britain until the scientific advice was clearer . [SEP]"
    ).split(),
  ]
  # Most context: Zwingmann (min 3 vs 2 in window 0) and sheepmeat (3 vs 3,
  # the earlier window) go to window 1.
  assert [d[2] for d in decoded] == [
    list(range(0, 11)),
    list(range(11, 19)),
    list(range(19, 31)),
  ]
  assert decoded[0][1] == {
    1: "B-LOC",
    2: "O",
    4: "O",
    5: "O",
    6: "O",
    7: "B-ORG",
    8: "I-ORG",
    9: "O",
    11: "O",
    12: "O",
    13: "B-PER",
  }
  assert decoded[1][1] == {
    4: "I-PER",
    7: "O",
    8: "O",
    9: "O",
    10: "O",
    11: "O",
    12: "O",
    13: "O",
  }
  assert decoded[2][1][11] == "B-LOC" and len(decoded[2][1]) == 12


@requires_conll
def test_document_context(tokenizer, train_sentences):
  # Peter Blackburn, between "EU rejects ... lamb ." and "BRUSSELS ...".
  featurizer = Featurizer(tokenizer, LABELS, 16, document_context=True)
  windows = [
    w for w in featurizer.windows(train_sentences[:5]) if w.sentence == 1
  ]
  (window,) = windows
  tokens, tags, words = _decoded(tokenizer, window)
  assert (
    tokens
    == (
      "[CLS] boycott british lamb . peter blackburn brussels "
      "1996 - 08 - 22 the european [SEP]"
    ).split()
  )
  assert tags == {5: "B-PER", 6: "I-PER"} and words == [0, 1]
  # Without it, the sentence stands alone.
  (alone,) = Featurizer(tokenizer, LABELS, 16).windows(train_sentences[1:2])
  assert _decoded(tokenizer, alone)[0] == [
    "[CLS]",
    "peter",
    "blackburn",
    "[SEP]",
  ]


@requires_conll
@pytest.mark.parametrize("document_context", [False, True])
def test_every_dev_word_predicted_once(tokenizer, document_context):
  sentences = conll.read_conll(str(CONLL_DIR / "valid.txt"))
  windows = Featurizer(tokenizer, LABELS, 24, document_context).windows(
    sentences
  )
  assert len(windows) > len(sentences)  # some sentences are split
  counts = [np.zeros(len(s.words), int) for s in sentences]
  for window in windows:
    assert len(window.input_ids) <= 24
    for _, word in window.predicted:
      counts[window.sentence][word] += 1
  assert all((c == 1).all() for c in counts)
  # Reading gold label ids back as predictions gives the gold tags.
  tags = evaluation.word_tags(
    windows, [w.label_ids for w in windows], sentences, LABELS
  )
  assert tags == [s.tags for s in sentences]


def test_records_parse_with_the_task_spec(tmp_path, tokenizer):
  sentences = conll.read_conll(str(FIXTURES / "ner" / "valid.txt"))
  windows = Featurizer(tokenizer, LABELS, 8).windows(sentences)
  path = str(tmp_path / "eval.tf_record")
  assert write_windows(path, windows, 8) == len(windows) > len(sentences)
  records = list(tf.data.TFRecordDataset(path))
  for window, record in zip(windows, records):
    parsed = tf.io.parse_single_example(record, ner_schema(8).parse_spec())
    n = len(window.input_ids)
    pad = [0] * (8 - n)
    assert parsed["input_ids"].numpy().tolist() == window.input_ids + pad
    assert parsed["input_mask"].numpy().tolist() == [1] * n + pad
    assert parsed["segment_ids"].numpy().tolist() == [0] * 8
    assert parsed["label_ids"].numpy().tolist() == window.label_ids + pad
    assert parsed["label_weights"].numpy().tolist() == (
      window.label_weights + pad
    )
