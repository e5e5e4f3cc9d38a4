"""SQuAD with SentencePiece pieces: training positions and predicted text
align with the context as well as with WordPiece (tiny model trained here on
the contexts of the golden SQuAD input)."""

import gzip
import json

import pytest

from bert_tf.tokenizers.sentencepiece_tokenizer import pieces_to_text
from bert_tf.tokenizers.sentencepiece_tokenizer import SentencePieceTokenizer
from bert_tf.tokenizers.tokenization import FullTokenizer
from data_prep.squad import postprocess
from data_prep.squad import raw_results
from data_prep.squad.example import read_squad_examples
from data_prep.squad.features import convert_examples_to_features
from data_prep.squad.features import improve_answer_span
from tests.conftest import FIXTURES
from tests.helpers.sentencepiece_model import train_model


@pytest.fixture(scope="module")
def squad(tmp_path_factory):
  """(SQuAD v1 file with one answer per question, SentencePiece model)."""
  tmp = tmp_path_factory.mktemp("squad_spm")
  data = json.load(
    gzip.open(FIXTURES / "squad" / "small_v1_first_answer.json.gz")
  )
  path = tmp / "squad.json"
  path.write_text(json.dumps(data))
  contexts = [
    p["context"] for article in data["data"] for p in article["paragraphs"]
  ]
  return str(path), train_model(tmp, contexts, 1000)


def _answers_from_labels(path, tokenizer, sentencepiece, lower=True):
  """{qas_id: (text predicted from the training answer span, gold text)}:
  logits that point exactly at each feature's training positions."""
  examples = read_squad_examples(path, True)
  features, results = [], []

  def output_fn(feature):
    features.append(feature)
    start, end = [0.0] * 128, [0.0] * 128
    if feature.token_is_max_context.get(feature.start_position):
      start[feature.start_position] = end[feature.end_position] = 10.0
    results.append(raw_results.RawResult(feature.unique_id, start, end))

  convert_examples_to_features(
    examples, tokenizer, 128, 64, 32, True, output_fn
  )
  predictions = postprocess.compute_predictions(
    examples, features, results, 20, 30, lower, sentencepiece=sentencepiece
  ).predictions
  return {
    e.qas_id: (predictions[e.qas_id], e.orig_answer_text) for e in examples
  }


@pytest.mark.parametrize("lower", [True, False])
def test_answer_spans_round_trip_like_wordpiece(squad, lower):
  path, model_file = squad
  pieces = _answers_from_labels(
    path, SentencePieceTokenizer(model_file, lower), True, lower
  )
  wordpiece = _answers_from_labels(
    path, FullTokenizer(str(FIXTURES / "vocab_uncased.txt")), False
  )
  exact = sum(text == gold for text, gold in pieces.values())
  exact_wordpiece = sum(text == gold for text, gold in wordpiece.values())
  # Misses are answers inside a piece ("2" of "2½", "10." of "2010.") or
  # longer than 30 pieces, as with WordPiece (15 of 1057 there).
  assert len(pieces) == 1057
  assert exact >= 0.98 * len(pieces)
  assert exact >= exact_wordpiece - 0.005 * len(pieces)
  # WordPiece's " ##" joining would leave SentencePiece's marks in the text.
  plain = _answers_from_labels(
    path, SentencePieceTokenizer(model_file, lower), False, lower
  )
  assert sum(text == gold for text, gold in plain.values()) < 0.8 * exact


def test_answer_after_a_quote(squad):
  tokenizer = SentencePieceTokenizer(squad[1])
  word = tokenizer.tokenize('"spectacular".')  # the context word's pieces
  start, end = improve_answer_span(
    word, 0, len(word) - 1, tokenizer, "Spectacular"
  )
  assert 0 < start <= end < len(word) - 1
  assert pieces_to_text(word[start : end + 1]) == "spectacular"
  text = postprocess.get_final_text(
    "spectacular", 'called it "Spectacular".', True, sentencepiece=True
  )
  assert text == "Spectacular"
