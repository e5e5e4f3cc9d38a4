"""The API's evaluate equals the script's eval_results file on the same
examples and weights: a model (fitted by the API, or SQuAD's random head)
is saved with save_run, the script predicts from that run folder on a
slice of the fixture data, and every metric the script wrote is the API's
(exactly; losses to float32 rounding)."""

import json

import keras
import pytest

import bert_tf
from data_prep.ner import conll
from tests.conftest import FIXTURES
from tests.helpers.parity import assert_same_txt
from tests.helpers.parity import results_txt
from tests.helpers.parity import run_script
from tests.helpers.scripts import squad_slice

pytestmark = pytest.mark.process  # trains, and runs the scripts


_PAIRS = [
  ("the cat sat", "the cat sat"),
  ("he went home", "stocks fell"),
  ("it rains", "it rains"),
  ("red car", "blue sky"),
  ("a man walked", "a man walked"),
  ("the day ended", "prices rose"),
] * 2
_LABELS = ["1", "0", "1", "0", "1", "0"] * 2


def test_text_classifier_evaluate_is_run_classifiers_eval_results(
  tiny_folder, tmp_path
):
  keras.utils.set_random_seed(1)  # the head's start
  clf = bert_tf.TextClassifier.from_pretrained(
    tiny_folder, num_labels=2, max_seq_length=16
  )
  clf.fit(
    _PAIRS, _LABELS, epochs=5, batch_size=4, learning_rate=1e-3, verbose=0
  )
  run = clf.save_run(str(tmp_path / "run"))
  data = tmp_path / "data"
  data.mkdir()
  # Batches of 5: the last is partial, which `loss` (a mean of batch
  # means) depends on.
  (data / "dev.tsv").write_text(
    "".join("%s\t%s\t%s\n" % (a, b, y) for (a, b), y in zip(_PAIRS, _LABELS))
  )
  run_script(
    "run_classifier.py",
    run,
    "--task_name=tsv",
    "--text_a_column=0",
    "--text_b_column=1",
    "--label_column=2",
    "--labels=0,1",
    "--do_eval",
    "--eval_batch_size=5",
    "--data_dir=%s" % data,
    "--max_seq_length=16",
  )
  script = results_txt(tmp_path / "run" / "eval_results.txt")
  api = clf.evaluate(_PAIRS, _LABELS, batch_size=5)
  assert_same_txt(script, api)
  assert script["global_step"] == "15"  # 12 pairs / 4 * 5 epochs


def test_token_tagger_evaluate_is_run_ners_eval_results(tiny_folder, tmp_path):
  train, dev = (
    conll.read_conll(str(FIXTURES / "ner" / name))
    for name in ("train.txt", "valid.txt")
  )
  labels = conll.label_list(train)
  # 8 positions: the longer sentences are cut into overlapping windows.
  keras.utils.set_random_seed(0)
  tagger = bert_tf.TokenTagger.from_pretrained(
    tiny_folder, labels=labels, max_seq_length=8
  )
  tagger.fit(
    [s.words for s in train],
    [s.tags for s in train],
    epochs=30,
    batch_size=4,
    learning_rate=3e-3,
    verbose=0,
  )
  run = tagger.save_run(str(tmp_path / "run"))
  run_script(
    "run_ner.py",
    run,
    "--do_eval",
    "--eval_file=%s" % (FIXTURES / "ner" / "valid.txt"),
    "--labels=%s" % ",".join(labels),
    "--max_seq_length=8",
  )
  script = results_txt(tmp_path / "run" / "eval_results.txt")
  api = tagger.evaluate([s.words for s in dev], [s.tags for s in dev])
  assert_same_txt(script, api)
  assert 0 < api["eval_f1"] < 1, api  # some entities found, not all


def _squad_examples(path):
  """(x, y) of a SQuAD file of one answer per question."""
  x, y = [], []
  for article in json.load(open(path))["data"]:
    for paragraph in article["paragraphs"]:
      for qa in paragraph["qas"]:
        x.append((qa["question"], paragraph["context"]))
        answer = (qa["answers"] or [None])[0]
        y.append(answer and (answer["text"], answer["answer_start"]))
  return x, y


# The random head, unfitted: fitted briefly, the tiny model finds no answer
# (v1: F1 0; v2: "" everywhere), which would compare little.
@pytest.mark.parametrize(
  "name, paragraphs, v2",
  [("small_v1_first_answer", 1, False), ("small_v2_first_answer", 2, True)],
)
def test_span_extractor_evaluate_is_run_squads_eval_results(
  tiny_folder, tmp_path, name, paragraphs, v2
):
  predict_file = squad_slice(tmp_path, name, paragraphs)
  x, y = _squad_examples(predict_file)
  keras.utils.set_random_seed(0)
  squad = bert_tf.SpanExtractor.from_pretrained(
    tiny_folder,
    max_seq_length=64,
    doc_stride=32,
    max_query_length=16,
    version_2_with_negative=v2,
  )
  run = squad.save_run(str(tmp_path / "run"))
  run_script(
    "run_squad.py",
    run,
    "--do_predict",
    "--predict_file=%s" % predict_file,
    "--max_seq_length=64",
    "--doc_stride=32",
    "--max_query_length=16",
    "--version_2_with_negative=%s" % v2,
  )
  script = json.loads((tmp_path / "run" / "eval_results.json").read_text())
  api = squad.evaluate(x, y)
  # The official metrics exactly; the API adds the loss and the step.
  assert set(api) - set(script) == {"eval_loss", "global_step"}
  assert {k: api[k] for k in script} == script
  if v2:
    assert script["HasAns_f1"] > 0 and script["NoAns_total"] > 0
  else:
    assert script["f1"] > 0
