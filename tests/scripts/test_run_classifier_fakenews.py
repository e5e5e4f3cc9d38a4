"""run_classifier.py --task_name=fakenews end to end: the published CSV
layout (a 40-row Chinese set the test writes), a vocabulary learned from its
titles, the tiny original checkpoint (fixtures/encoder/ckpt_b), and
eval_results.txt's weighted accuracy recomputed from the predictions."""

import numpy as np
import pytest
import tensorflow as tf

from data_prep.learn_vocab import words
from data_prep.pretraining.documents import Shard
from tests.conftest import FIXTURES
from tests.helpers.checkpoints import ckpt_prefix
from tests.helpers.fakenews import fakenews_rows
from tests.helpers.fakenews import write_fakenews
from tests.helpers.processes import run

LABELS = ("agreed", "disagreed", "unrelated")
WEIGHTS = {"agreed": 1 / 15, "disagreed": 1 / 5, "unrelated": 1 / 16}


def _learn_vocab(folder):
  """vocab.txt learned from every Chinese title, as the learn_vocab command
  does (word counts, then tensorflow-text's learner)."""
  from data_prep.learn_vocab.wordpiece import learn_wordpiece  # loads TF
  from data_prep.learn_vocab.wordpiece import write_vocab

  corpus = folder / "corpus.txt"
  titles = [t for row in fakenews_rows() for t in (row[3], row[4])]
  corpus.write_text("\n".join(titles) + "\n", encoding="utf-8")
  counts = words.count_words([Shard(str(corpus))], do_lower_case=True)
  path = folder / "vocab.txt"
  with open(path, "w", encoding="utf-8") as f:
    write_vocab(learn_wordpiece(counts, 1000, 99), f)
  return path


def _first_input_ids(path):
  raw = next(iter(tf.data.TFRecordDataset(str(path)))).numpy()
  feature = tf.train.Example.FromString(raw).features.feature
  return list(feature["input_ids"].int64_list.value)


@pytest.mark.process
@pytest.mark.slow
def test_fakenews_csv_train_eval_predict(tmp_path):
  data, out = tmp_path / "data", tmp_path / "out"
  data.mkdir()
  rows = write_fakenews(data)
  vocab_path = _learn_vocab(tmp_path)
  result = run(
    [
      "run_classifier.py",
      "--task_name=fakenews",
      "--do_train",
      "--do_eval",
      "--do_predict",
      "--data_dir=%s" % data,
      "--vocab_file=%s" % vocab_path,
      "--bert_config_file=%s" % (FIXTURES / "encoder/ckpt_b/bert_config.json"),
      "--init_checkpoint=%s" % ckpt_prefix("ckpt_b"),
      "--max_seq_length=64",
      "--train_batch_size=8",
      "--num_train_epochs=2",
      "--learning_rate=1e-3",
      "--save_checkpoints_steps=0",
      "--output_dir=%s" % out,
    ]
  )
  assert result.returncode == 0, result.stderr[-3000:]

  # The first dev pair (CJK characters and full-width punctuation only):
  # one token per character, none [UNK].
  vocab = vocab_path.read_text(encoding="utf-8").splitlines()
  title1, title2 = rows["dev"][0][3:5]
  ids = [i for i in _first_input_ids(out / "eval.tf_record") if i]
  assert [vocab[i] for i in ids] == [
    "[CLS]",
    *title1,
    "[SEP]",
    *title2,
    "[SEP]",
  ]

  lines = (out / "eval_results.txt").read_text().splitlines()
  results = {k: float(v) for k, v in (line.split(" = ") for line in lines)}
  assert list(results) == [
    "eval_accuracy",
    "eval_loss",
    "eval_weighted_accuracy",
    "global_step",
    "loss",
  ]
  assert results["global_step"] == 32 // 8 * 2

  # test.csv is dev.csv without its labels: the same model's predictions on
  # the same rows, scored here by the competition's formula.
  probabilities = np.loadtxt(out / "test_results.tsv", ndmin=2)
  predicted = [LABELS[i] for i in probabilities.argmax(axis=1)]
  truth = [row[7] for row in rows["dev"]]
  right = [p == t for p, t in zip(predicted, truth)]
  weighted = sum(WEIGHTS[t] for t, ok in zip(truth, right) if ok) / sum(
    WEIGHTS[t] for t in truth
  )
  assert results["eval_accuracy"] == pytest.approx(np.mean(right))
  assert results["eval_weighted_accuracy"] == pytest.approx(weighted, abs=1e-6)
