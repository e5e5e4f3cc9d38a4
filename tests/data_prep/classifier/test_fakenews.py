"""--task_name=fakenews: the WSDM 2019 Cup CSV files as published (quoted
fields, header, test.csv without labels), the original's CJK splitting of
their titles, the competition's weighted accuracy (hand-derived values) and
a learned vocabulary that covers the Chinese text."""

import re

import numpy as np
import pytest

from bert_tf.io_utils import InputError
from bert_tf.tasks import classifier_results
from bert_tf.tasks import glue_metrics
from bert_tf.tokenizers.tokenization import BasicTokenizer
from bert_tf.tokenizers.tokenization import FullTokenizer
from data_prep.classifier import tasks as classifier_tasks
from data_prep.learn_vocab import words
from data_prep.pretraining.documents import Shard
from tests.helpers.fakenews import fakenews_rows
from tests.helpers.fakenews import write_fakenews

HEADER = "id,tid1,tid2,title1_zh,title2_zh,title1_en,title2_en,label\n"
# Written by hand: commas, doubled quotes and a line break inside quotes.
QUOTED = (
  HEADER + '7,1,2,"标题一, ""引号""","第二行\n标题",a,"b, c",agreed\n'
  "8,1,3,谣言,辟谣,x,y,disagreed\n"
)


def _processor(folder, name="fakenews"):
  return classifier_tasks.get_processor(name, str(folder))


def _write(path, text):
  path.write_text(text, encoding="utf-8", newline="")


def test_reads_quoted_fields_as_csv(tmp_path):
  _write(tmp_path / "train.csv", QUOTED)
  examples = _processor(tmp_path).get_examples("train")
  assert [(e.guid, e.text_a, e.text_b, e.label) for e in examples] == [
    ("train-7", '标题一, "引号"', "第二行\n标题", "agreed"),
    ("train-8", "谣言", "辟谣", "disagreed"),
  ]


@pytest.mark.parametrize("name", ["fakenews", "FakeNews", "wsdm-fakenews"])
def test_published_layout_all_splits(tmp_path, name):
  rows = write_fakenews(tmp_path)
  processor = _processor(tmp_path, name)
  assert processor.get_labels() == ["agreed", "disagreed", "unrelated"]
  for split in ("train", "dev"):
    examples = processor.get_examples(split)
    assert [(e.guid, e.text_a, e.text_b, e.label) for e in examples] == [
      ("%s-%s" % (split, r[0]), r[3], r[4], r[7]) for r in rows[split]
    ]
  # test.csv has no label column: every example gets the first label.
  test = processor.get_examples("test")
  assert [(e.guid, e.text_b, e.label) for e in test] == [
    ("test-" + r[0], r[4], "agreed") for r in rows["dev"]
  ]


@pytest.mark.parametrize(
  "text, culprit",
  [
    # Another column order (e.g. re-saved with the English titles first).
    (HEADER.replace("title1_zh", "title1_en", 1), "train.csv:1"),
    # A header-less file.
    ("7,1,2,a,b,c,d,agreed\n", "train.csv:1"),
    (HEADER + "7,1,2,a,b,c,d,fake\n", "train.csv:2: unknown label 'fake'"),
    (HEADER + "7,1,2,a,b,c,d\n", "8 comma-separated columns, found 7"),
    (HEADER + '7,1,2,"a"b,c,d,e,agreed\n', "train.csv:2"),
    (HEADER + '7,1,2,"a,b,c,d,e,agreed\n', "train.csv:2"),
  ],
)
def test_bad_files_are_one_line_errors(tmp_path, text, culprit):
  _write(tmp_path / "train.csv", text)
  with pytest.raises(InputError, match=re.escape(culprit)):
    _processor(tmp_path).get_examples("train")


def test_a_byte_order_mark_before_a_quoted_header(tmp_path):
  _write(tmp_path / "train.csv", "\ufeff" + QUOTED.replace("id", '"id"', 1))
  assert len(_processor(tmp_path).get_examples("train")) == 2


def test_titles_go_through_the_originals_cjk_split():
  # One token per CJK character; punctuation (full-width too) split off;
  # Latin letters and digits stay a lower-cased word.
  tokens = BasicTokenizer(do_lower_case=True).tokenize(
    "5G手机，充电时接电话会爆炸？"
  )
  assert tokens == ["5g", *"手机", "，", *"充电时接电话会爆炸", "？"]


def _chinese_chars(text):
  # A second definition of "CJK character" than the tokenizer's table.
  return re.findall(r"[\u4e00-\u9fff]", text)


def test_learned_vocabulary_covers_the_chinese_titles(tmp_path):
  from data_prep.learn_vocab.wordpiece import learn_wordpiece  # loads TF

  titles = [t for row in fakenews_rows() for t in (row[3], row[4])]
  corpus = tmp_path / "corpus.txt"
  corpus.write_text("\n".join(titles) + "\n", encoding="utf-8")
  counts = words.count_words([Shard(str(corpus))], do_lower_case=True)
  vocab = learn_wordpiece(counts, 1000, 99)
  assert set(_chinese_chars("".join(titles))) <= set(vocab)
  path = tmp_path / "vocab.txt"
  path.write_text("".join(t + "\n" for t in vocab), encoding="utf-8")
  tokenizer = FullTokenizer(str(path), do_lower_case=True)
  for title in titles:
    tokens = tokenizer.tokenize(title)
    assert "[UNK]" not in tokens, title
    assert [t for t in tokens if _chinese_chars(t)] == _chinese_chars(title)


# agreed=0, disagreed=1, unrelated=2 (the task's label order).
def test_weighted_accuracy_by_hand():
  labels = [0, 1, 2, 2]
  predictions = [0, 2, 2, 0]
  # Right: agreed (1/15) and one unrelated (1/16) of
  # 1/15 + 1/5 + 2/16 = 94/240; 16/240 + 15/240 = 31/240.
  assert glue_metrics.compute_metrics(
    "fakenews", predictions, labels
  ) == pytest.approx(
    {"eval_accuracy": 0.5, "eval_weighted_accuracy": 31 / 94}, abs=1e-12
  )


def test_weights_are_the_published_ones_by_label_name():
  labels = classifier_tasks.TASKS["fakenews"].labels
  assert dict(zip(labels, glue_metrics.FAKENEWS_WEIGHTS)) == {
    "agreed": 1 / 15,
    "disagreed": 1 / 5,
    "unrelated": 1 / 16,
  }


def test_eval_results_hold_weighted_accuracy_without_padding_rows():
  # Three real rows (agreed right, disagreed wrong, unrelated right) and a
  # TPU padding row the metrics must skip.
  probabilities = [[0.8, 0.1, 0.1], [0.1, 0.2, 0.7], [0, 0, 1], [1, 0, 0]]
  rows = [
    {
      "probabilities": np.asarray(p),
      "per_example_loss": 1.0,
      "label_ids": label,
      "is_real_example": real,
    }
    for p, label, real in zip(probabilities, [0, 1, 2, 1], [1, 1, 1, 0])
  ]
  results = classifier_results.eval_results("fakenews", rows, 8, False, 5)
  assert results["eval_accuracy"] == pytest.approx(2 / 3)
  # (1/15 + 1/16) / (1/15 + 1/5 + 1/16) = 31 / 79.
  assert results["eval_weighted_accuracy"] == pytest.approx(31 / 79)
  assert classifier_results.metric_names("fakenews", False) == [
    "eval_accuracy",
    "eval_weighted_accuracy",
    "eval_loss",
    "loss",
  ]
