"""The Python API's argument checks: each bad element is named by its index
in one line, in the API's words (no script flags), before any work — a
refused fit leaves the weights as they were. Also: which SQuAD labels the
checks pass on to run_squad.py's reader (white space aside, the original's
word comparison decides)."""

import numpy as np
import pytest

import bert_tf
from bert_tf.api.span_extractor import squad_data
from bert_tf.io_utils import InputError
from data_prep.squad.example import data_examples

_CONTEXT = "the book was written by ann lee in paris ."  # 42 characters
_ENDINGS = ["walked in.", "ate it.", "flew away.", "sang."]


@pytest.fixture(scope="module")
def models(tiny_folder):
  built = {}
  settings = {
    "clf": (bert_tf.TextClassifier, {"num_labels": 2}),
    "regression": (bert_tf.TextClassifier, {"num_labels": 1}),
    "tagger": (bert_tf.TokenTagger, {"labels": ["O", "B-PER", "I-PER"]}),
    "squad": (bert_tf.SpanExtractor, {"doc_stride": 4, "max_query_length": 6}),
    "mc": (bert_tf.MultipleChoice, {"num_choices": 4}),
  }

  def get(name):
    if name not in built:
      cls, head = settings[name]
      built[name] = cls.from_pretrained(tiny_folder, max_seq_length=16, **head)
    return built[name]

  return get


_SQUAD_X = [("who wrote it ?", _CONTEXT), ("where ?", _CONTEXT)]
_ANN = ("ann lee", _CONTEXT.index("ann lee"))

_CASES = [
  # (model, its call, the whole message)
  (
    "clf",
    lambda m: m.predict(["a", None]),
    "input 1: None is neither a text nor a (text_a, text_b) pair",
  ),
  (
    "clf",
    lambda m: m.predict([("a", "b"), ("c", 5)]),
    "input 1's text_b: 5 is not a text",
  ),
  (
    "clf",
    lambda m: m.predict([b"ok", b"\xffbad"]),
    "input 1: bytes that are not UTF-8 (at byte 0)",
  ),
  (
    "clf",
    lambda m: m.predict(["a", "b\ud800"]),
    "input 1: not encodable as UTF-8 (character 1)",
  ),
  ("clf", lambda m: m.predict([]), "x: no inputs"),
  (
    "clf",
    lambda m: m.predict(5),
    "x: a list of texts or (text_a, text_b) pairs, not int",
  ),
  (
    "clf",
    lambda m: m.predict(["a"], batch_size=0),
    "batch_size=0: must be >= 1",
  ),
  (
    "clf",
    lambda m: m.predict(["a"], raw="yes"),
    "raw='yes': must be True or False",
  ),
  (
    "clf",
    lambda m: m.evaluate(["a", "b"], ["1", None]),
    "label 1: None is not one of 0,1 (or an id below 2)",
  ),
  (
    "regression",
    lambda m: m.fit(["a", "b"], [0.5, float("nan")]),
    "label 1: nan is not a finite number",
  ),
  (
    "tagger",
    lambda m: m.predict([["John", ""]]),
    "input 0's word 1: a blank word",
  ),
  (
    "tagger",
    lambda m: m.predict(["John", 7]),
    "input 1: 7 is neither a text nor a word list",
  ),
  (
    "tagger",
    lambda m: m.evaluate(["John", ""], [["B-PER"], []]),
    "input 1: no words to learn from",
  ),
  (
    "tagger",
    lambda m: m.fit([["John"]], ["B-PER"]),
    "tags 0: 'B-PER' is not a list of tags",
  ),
  (
    "squad",
    lambda m: m.predict([("who ?", None)]),
    "input 0's context: None is not a text",
  ),
  (
    "squad",
    lambda m: m.evaluate(_SQUAD_X, [_ANN, ("xyz", 5)]),
    "answer 1: 'xyz' is not at character 5 of its context (nor anywhere in it)",
  ),
  (
    "squad",
    lambda m: m.fit(_SQUAD_X, [_ANN, ("paris", 3)]),
    "answer 1: 'paris' is not at character 3 of its context (it is at 35)",
  ),
  (
    "squad",
    lambda m: m.fit(_SQUAD_X, [_ANN, ("paris", 200)]),
    "answer 1: 'paris' at character 200 is outside its context (42 characters)",
  ),
  (
    "squad",
    lambda m: m.evaluate(_SQUAD_X, [_ANN, ("paris", "35")]),
    "answer 1: offset '35' is not a character offset (an int)",
  ),
  (
    "squad",
    lambda m: m.evaluate(_SQUAD_X, [_ANN, None]),
    "answer 1: None (no answer) needs a model with "
    "version_2_with_negative=True",
  ),
  (
    "squad",
    lambda m: m.fit(_SQUAD_X, [("", 0), _ANN]),
    "answer 0: the answer text is blank",
  ),
  (
    "squad",
    lambda m: m.fit(
      _SQUAD_X, [_ANN, _ANN], validation_data=(_SQUAD_X[:1], [("ann", 99)])
    ),
    "validation_data: answer 0: 'ann' at character 99 is outside its "
    "context (42 characters)",
  ),
  (
    "mc",
    lambda m: m.predict([("ctx", ["a", None, "c", "d"])]),
    "input 0's ending 1: None is not a text",
  ),
  (
    "mc",
    lambda m: m.predict([("ctx", "abcd")]),
    "input 0's endings: 'abcd' is not a list of texts",
  ),
  (
    "mc",
    lambda m: m.fit([("ctx", _ENDINGS)] * 2, [0, True]),
    "label 1: True is not an ending index in [0, 4)",
  ),
]


@pytest.mark.parametrize(
  "name, call, message", _CASES, ids=[str(i) for i in range(len(_CASES))]
)
def test_a_bad_element_is_named_before_any_work(models, name, call, message):
  model = models(name)
  before = [w.numpy() for w in model.model.weights]
  with pytest.raises(InputError) as error:
    call(model)
  assert str(error.value) == message
  assert "--" not in message  # the API's words, not a script's flags
  after = model.model.weights
  assert all(np.array_equal(a, b.numpy()) for a, b in zip(before, after))
  assert model.global_step == 0


def test_white_space_is_left_to_the_original_reader():
  x = [("who ?", "he met ann lee ."), ("who ?", "he met ann\xa0lee .")]
  # Another run of white space at the offset: the original's words match.
  spaced = squad_data(x[:1], [("ann\nlee", 7)])
  assert spaced[0]["paragraphs"][0]["qas"][0]["answers"] == [
    {"text": "ann\nlee", "answer_start": 7}
  ]
  examples, skipped = data_examples(spaced, "inputs", True, False)
  assert [e.orig_answer_text for e in examples] == ["ann\nlee"] and not skipped
  # A no-break space is not white space to the original reader: the answer
  # is accepted here and skipped there ("Could not find answer").
  examples, skipped = data_examples(
    squad_data(x, [("ann lee", 7), ("ann\xa0lee", 7)]), "inputs", True, False
  )
  assert [e.qas_id for e in examples] == ["0"] and skipped == ["1"]
