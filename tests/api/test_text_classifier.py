"""bert_tf.TextClassifier on the tiny fixture model: fit, evaluate, predict,
save_run read by run_classifier.py and by from_pretrained, export read by
tf.saved_model.load, and the one-line errors.

The model is fine-tuned once per module (a few steps on paraphrase-like
pairs: label 1 when text_b repeats text_a); the tests that use it are
`process` tests. Loading a HuggingFace folder and the errors before any
download need no training: they run in `make test-fast`."""

import keras
import numpy as np
import pytest
import tensorflow as tf

import bert_tf
from bert_tf.io_utils import InputError
from tests.helpers import processes
from tests.helpers.hf_models import tiny_hf_model

_PAIRS = [
  ("the cat sat", "the cat sat"),
  ("he went home", "stocks fell"),
  ("it rains", "it rains"),
  ("red car", "blue sky"),
] * 4
_LABELS = ["1", "0", "1", "0"] * 4


@pytest.fixture(scope="module")
def trained(tiny_folder):
  # The head starts random: 5 epochs of 4 steps learn the pairs from most
  # initializations, not from all (e.g. seed 3 ends at loss 0.68).
  keras.utils.set_random_seed(1)
  clf = bert_tf.TextClassifier.from_pretrained(
    tiny_folder, num_labels=2, max_seq_length=16
  )
  before = clf.evaluate(_PAIRS, _LABELS)
  history = clf.fit(
    _PAIRS, _LABELS, epochs=5, batch_size=4, learning_rate=1e-3, verbose=0
  )
  return clf, before, history


@pytest.mark.process  # fine-tunes the module's model
def test_fit_lowers_the_loss_with_the_original_schedule(trained):
  clf, before, history = trained
  after = clf.evaluate(_PAIRS, _LABELS)
  # 16 examples / batch 4 * 5 epochs, as run_classifier.py counts steps.
  assert clf.global_step == after["global_step"] == 20
  # A Keras History: one epoch per 4 steps, the training loss of each.
  assert history.epoch == [0, 1, 2, 3, 4]
  assert len(history.history["loss"]) == 5
  assert after["eval_loss"] < before["eval_loss"] - 0.1
  assert after["eval_accuracy"] >= 0.75
  # Linear decay to 0 at the last step: the original schedule.
  assert float(clf._optimizer.learning_rate) == pytest.approx(0.0, abs=1e-9)


@pytest.mark.process  # fine-tunes the module's model
def test_predict_is_one_row_per_input_in_order(trained):
  clf = trained[0]
  inputs = [_PAIRS[0], _PAIRS[1], ("a dog", "a dog"), _PAIRS[0]]
  probabilities = clf.predict(inputs, batch_size=3, raw=True)  # two calls
  assert probabilities.shape == (4, 2)
  np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, rtol=1e-6)
  np.testing.assert_allclose(probabilities[0], probabilities[3], atol=1e-6)
  np.testing.assert_allclose(
    clf.predict(inputs[::-1], raw=True), probabilities[::-1], atol=1e-6
  )
  assert probabilities[0, 1] > probabilities[1, 1]  # what it learned
  # Named results: the arg-max label's name, its probability, all of them.
  results = clf.predict(inputs, batch_size=3)
  assert [r["label"] for r in results] == [
    clf.labels[i] for i in probabilities.argmax(axis=1)
  ]
  for result, row in zip(results, probabilities):
    assert result["score"] == pytest.approx(row.max(), abs=1e-6)
    assert result["probabilities"] == pytest.approx(
      {"0": row[0], "1": row[1]}, abs=1e-6
    )
  # A single text is its own input ([CLS] a [SEP]), not a pair with "".
  assert clf.predict(["the cat sat"], raw=True).shape == (1, 2)


@pytest.mark.process  # fine-tunes the module's model
def test_save_run_is_read_by_from_pretrained_and_export(trained, tmp_path):
  clf = trained[0]
  run = clf.save_run(str(tmp_path / "run"))
  expected = clf.predict(_PAIRS[:4], raw=True)
  again = bert_tf.TextClassifier.from_pretrained(run)
  assert again.labels == ["0", "1"] and again.max_seq_length == 16
  assert again.global_step == clf.global_step == 20  # the run's step
  np.testing.assert_allclose(
    again.predict(_PAIRS[:4], raw=True), expected, atol=1e-6
  )
  clf.export(str(tmp_path / "serving"))
  serve = tf.saved_model.load(str(tmp_path / "serving")).signatures[
    "serving_default"
  ]
  outputs = serve(
    text_a=tf.constant([p[0] for p in _PAIRS[:4]]),
    text_b=tf.constant([p[1] for p in _PAIRS[:4]]),
  )
  np.testing.assert_allclose(
    outputs["probabilities"].numpy(), expected, atol=1e-5
  )
  with pytest.raises(InputError, match="num_labels=3: the run's model has"):
    bert_tf.TextClassifier.from_pretrained(run, num_labels=3)
  with pytest.raises(InputError, match="already exists"):
    clf.save_run(run)


@pytest.mark.process  # fine-tunes, then starts run_classifier.py
def test_run_classifier_predicts_from_the_saved_run(trained, tmp_path):
  clf = trained[0]
  run = clf.save_run(str(tmp_path / "run"))
  data = tmp_path / "data"
  data.mkdir()
  (data / "test.tsv").write_text("".join("%s\t%s\t0\n" % p for p in _PAIRS[:4]))
  result = processes.run(
    [
      "run_classifier.py",
      "--task_name=tsv",
      "--text_a_column=0",
      "--text_b_column=1",
      "--label_column=2",
      "--labels=0,1",
      "--do_predict",
      "--data_dir=%s" % data,
      "--output_dir=%s" % run,
      "--vocab_file=%s/vocab.txt" % run,
      "--max_seq_length=16",
      "--bert_config_file=%s/bert_config.json" % run,
      "--noprogress",
    ]
  )
  assert result.returncode == 0, result.stderr[-2000:]
  lines = (tmp_path / "run" / "test_results.tsv").read_text().splitlines()
  scores = np.array([[float(v) for v in line.split("\t")] for line in lines])
  np.testing.assert_allclose(
    scores, clf.predict(_PAIRS[:4], raw=True), atol=1e-5
  )


@pytest.mark.process  # fine-tunes the module's model
def test_bad_inputs_are_one_line_input_errors(trained):
  clf = trained[0]
  with pytest.raises(InputError, match="^input 0: .* neither a text nor a"):
    clf.predict([("a", "b", "c")])
  with pytest.raises(InputError, match="^input 1 is a pair, input 0 a text"):
    clf.predict(["a", ("b", "c")])
  with pytest.raises(InputError, match="^x: a list of .*, not one text"):
    clf.predict("a text")
  with pytest.raises(InputError, match="^label 1: 'maybe' is not one of 0,1"):
    clf.fit(_PAIRS[:2], ["1", "maybe"])
  with pytest.raises(InputError, match="2 inputs but 1 labels"):
    clf.evaluate(_PAIRS[:2], ["1"])


def test_hf_folder_loads_its_head_and_a_mismatch_is_refused(tmp_path):
  tensors = tiny_hf_model(str(tmp_path / "hf"))
  vocab = tmp_path / "vocab.txt"  # the tiny HF vocab lacks [CLS] / [SEP]
  vocab.write_text(
    "".join(
      t + "\n"
      for t in ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
      + list("abcdefghijklmno")
    )
  )
  clf = bert_tf.TextClassifier.from_pretrained(
    str(tmp_path / "hf"), num_labels=3, vocab_file=str(vocab), max_seq_length=8
  )
  np.testing.assert_array_equal(
    clf.model.tf1_variables()["output_weights"].numpy(),
    tensors["classifier.weight"],
  )
  assert clf.predict([("a b", "c")], raw=True).shape == (1, 3)
  with pytest.raises(
    InputError, match=r"task head has output_\w+ of shape \[3"
  ):
    bert_tf.TextClassifier.from_pretrained(
      str(tmp_path / "hf"),
      num_labels=2,
      vocab_file=str(vocab),
      max_seq_length=8,
    )


def test_unknown_names_and_folders_fail_before_any_download(
  tmp_path, tiny_folder
):
  with pytest.raises(InputError, match="unknown model 'no-such-model'"):
    bert_tf.TextClassifier.from_pretrained("no-such-model", num_labels=2)
  with pytest.raises(InputError, match="not a model folder"):
    bert_tf.TextClassifier.from_pretrained(str(tmp_path), num_labels=2)
  with pytest.raises(InputError, match="needs num_labels"):
    bert_tf.TextClassifier.from_pretrained(tiny_folder)
