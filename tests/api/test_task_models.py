"""bert_tf.MultipleChoice, TokenTagger and SpanExtractor on the tiny
fixture model: training features against hand-derived expectations, a few
fit steps lowering the loss, predict in order, run folders read back, and
one-line errors."""

import numpy as np
import pytest

import bert_tf
from bert_tf.io_utils import InputError
from bert_tf.tokenizers.tokenization import FullTokenizer

pytestmark = pytest.mark.process  # trains end to end in this process

_MC = [
  (
    "She opened the door.",
    "She",
    ["walked in.", "ate the door.", "flew away.", "sang loudly."],
  ),
  (
    "The dog barked.",
    ["at the cat.", "a song.", "the moon fell.", "red blue."],
  ),
] * 4
_TAGS = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]


def test_multiple_choice(tiny_folder, tmp_path):
  mc = bert_tf.MultipleChoice.from_pretrained(
    tiny_folder, num_choices=4, max_seq_length=24
  )
  labels = [0, 2] * 4
  before = mc.evaluate(_MC, labels)
  mc.fit(_MC, labels, epochs=5, batch_size=4, learning_rate=1e-3, verbose=0)
  after = mc.evaluate(_MC, labels)
  assert after["global_step"] == 10
  assert after["eval_loss"] < before["eval_loss"]
  probabilities = mc.predict(_MC[:2], raw=True)
  assert probabilities.shape == (2, 4)
  np.testing.assert_allclose(
    mc.predict(_MC[1::-1], raw=True), probabilities[::-1], atol=1e-6
  )
  assert [r["choice"] for r in mc.predict(_MC[:2])] == (
    probabilities.argmax(axis=1).tolist()
  )
  # "(context, endings)" is "(context, '', endings)", as the script packs it.
  no_prefix = ("The dog barked.", "", _MC[1][1])
  np.testing.assert_allclose(
    mc.predict([no_prefix], raw=True), probabilities[1:], atol=1e-6
  )
  run = mc.save_run(str(tmp_path / "run"))
  again = bert_tf.MultipleChoice.from_pretrained(run)
  np.testing.assert_allclose(
    again.predict(_MC[:2], raw=True), probabilities, atol=1e-6
  )
  with pytest.raises(InputError, match="num_choices=3: the run's model has 4"):
    bert_tf.MultipleChoice.from_pretrained(run, num_choices=3)
  with pytest.raises(InputError, match="^input 0: 3 endings; .* has num_ch"):
    mc.predict([("context", ["a", "b", "c"])])
  with pytest.raises(InputError, match=r"^label 1: 4 is not an ending index"):
    mc.fit(_MC[:2], [0, 4])


def test_token_tagger(tiny_folder, tmp_path):
  tagger = bert_tf.TokenTagger.from_pretrained(
    tiny_folder, labels=_TAGS, max_seq_length=8
  )
  # 10 words in windows of at most 6 pieces: each word is trained once,
  # its tag on its first piece.
  words = "john smith went from paris to rome with mary lee".split()
  tags = [
    "B-PER",
    "I-PER",
    "O",
    "O",
    "B-LOC",
    "O",
    "B-LOC",
    "O",
    "B-PER",
    "I-PER",
  ]
  # pylint: disable-next=protected-access
  features = tagger._features([words], [tags])
  assert features["label_weights"].sum() == len(words)
  assert (features["input_mask"].sum(axis=1) <= 8).all()
  weighted = features["label_ids"][features["label_weights"] > 0]
  assert [_TAGS[i] for i in weighted] == tags
  before = tagger.evaluate([words] * 4, [tags] * 4)
  tagger.fit(
    [words] * 4,
    [tags] * 4,
    epochs=10,
    batch_size=4,
    learning_rate=1e-3,
    verbose=0,
  )
  after = tagger.evaluate([words] * 4, [tags] * 4)
  assert after["eval_loss"] < before["eval_loss"]
  predicted = tagger.predict([" ".join(words), "mary went home"], raw=True)
  assert [len(p) for p in predicted] == [10, 3]
  assert tagger.predict([words, ["mary", "went", "home"]], raw=True) == (
    predicted
  )
  assert tagger.predict([" ".join(words)])[0]["tags"] == predicted[0]
  run = tagger.save_run(str(tmp_path / "run"))
  assert (
    bert_tf.TokenTagger.from_pretrained(run).predict(
      [" ".join(words)], raw=True
    )
    == predicted[:1]
  )
  with pytest.raises(InputError, match="^tags 0: 2 tags for 3 words"):
    tagger.fit([["a", "b", "c"]], [["O", "O"]])
  with pytest.raises(InputError, match="^tags 0: tag 0 'B-ORG' is not one"):
    tagger.fit([["a"]], [["B-ORG"]])


def test_span_extractor(tiny_folder, tmp_path):
  squad = bert_tf.SpanExtractor.from_pretrained(
    tiny_folder, max_seq_length=16, doc_stride=4, max_query_length=6
  )
  context = "the book was written by ann lee in paris in the year 1990 ."
  x = [("who wrote the book ?", context), ("when was it written ?", context)]
  y = [("ann lee", context.index("ann lee")), ("1990", context.index("1990"))]
  features = squad._features(x, y)  # pylint: disable=protected-access
  tokenizer = FullTokenizer(tiny_folder + "/vocab.txt", do_lower_case=True)
  tokens = [
    tokenizer.convert_ids_to_tokens(row)
    for row in features["input_ids"].tolist()
  ]
  found = {
    " ".join(t[s : e + 1])
    for t, s, e in zip(
      tokens, features["start_positions"], features["end_positions"]
    )
  }
  # Windows holding the answer point at its pieces; the others at [CLS].
  assert found == {
    "[CLS]",
    " ".join(tokenizer.tokenize("ann lee")),
    " ".join(tokenizer.tokenize("1990")),
  }
  assert (features["start_positions"] > 0).sum() >= 2
  before = squad.evaluate(x * 4, y * 4)
  squad.fit(x * 4, y * 4, epochs=5, batch_size=4, learning_rate=1e-3, verbose=0)
  assert squad.evaluate(x * 4, y * 4)["eval_loss"] < before["eval_loss"]
  answers = squad.predict(x, raw=True)
  assert len(answers) == 2 and all(isinstance(a, str) for a in answers)
  for result, answer in zip(squad.predict(x), answers):
    assert result["answer"] == answer
    assert context[result["start_char"] : result["end_char"]] == answer
  run = squad.save_run(str(tmp_path / "run"))
  again = bert_tf.SpanExtractor.from_pretrained(run)
  assert again.sequence["doc_stride"] == 4
  assert again.predict(x, raw=True) == answers
  with pytest.raises(InputError, match="^input 0: .* a .question, context"):
    squad.predict(["just one text"])
