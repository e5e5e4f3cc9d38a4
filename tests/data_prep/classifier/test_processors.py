"""Classifier processors: real GLUE rows (with their file quirks) and the
layouts of the tasks whose data is not shipped (hand-made rows)."""

import pytest

from bert_tf.io_utils import InputError
from data_prep.classifier import tasks as classifier_tasks


def _examples(fixtures_dir, task, split, data=None):
  processor = classifier_tasks.get_processor(
    task, str(fixtures_dir / "glue" / (data or task.upper()))
  )
  return processor.get_examples(split)


def test_cola_header_only_on_test_and_missing_final_newline(fixtures_dir):
  train = _examples(fixtures_dir, "cola", "train", "CoLA")
  assert [e.guid for e in train] == ["train-0", "train-1", "train-2", "train-3"]
  assert train[0].text_a == (
    "Our friends won't buy this analysis, let alone the next one we propose."
  )
  assert train[0].text_b is None and train[0].label == "1"
  dev = _examples(fixtures_dir, "cola", "dev", "CoLA")
  # The last line has no newline; it is still a complete row.
  assert dev[-1].guid == "dev-2"
  assert dev[-1].text_a == "John talked to Bill about himself."
  test = _examples(fixtures_dir, "cola", "test", "CoLA")
  # Header skipped, guid counts it (original: enumerate over all lines).
  assert [(e.guid, e.text_a, e.label) for e in test][0] == (
    "test-1",
    "Bill whistled past the house.",
    "0",
  )


def test_mrpc_bom_header_and_literal_quotes(fixtures_dir):
  train = _examples(fixtures_dir, "mrpc", "train")
  assert len(train) == 6 and train[0].guid == "train-1"
  assert train[0].label == "1" and train[1].label == "0"
  assert train[0].text_a.startswith(
    "Amrozi accused his brother, whom he called \"the witness\""
  )
  dev = _examples(fixtures_dir, "mrpc", "dev")
  # quotechar=None: the unbalanced leading quote stays in the text.
  assert dev[0].text_b == (
    "\"The foodservice pie business does not fit our long-term growth strategy."
  )
  test = _examples(fixtures_dir, "mrpc", "test")
  assert [e.label for e in test] == ["0", "0"]


def test_sst2_keeps_trailing_space_and_aliases(fixtures_dir):
  for name in ("sst-2", "SST2"):
    train = _examples(fixtures_dir, name, "train", "SST-2")
    assert train[0].text_a == "hide new secretions from the parental units "
    assert train[0].guid == "train-1" and train[0].label == "0"
  test = _examples(fixtures_dir, "sst-2", "test", "SST-2")
  assert test[0].text_a == "uneasy mishmash of styles and genres ."


def test_stsb_regression_labels(fixtures_dir):
  processor = classifier_tasks.get_processor(
    "sts-b", str(fixtures_dir / "glue" / "STS-B")
  )
  assert processor.is_regression and processor.get_labels() is None
  train = processor.get_examples("train")
  assert [(e.text_a, e.text_b, e.label) for e in train[:2]] == [
    ("A plane is taking off.", "An air plane is taking off.", 5.0),
    ("A man is playing a large flute.", "A man is playing a flute.", 3.8),
  ]
  assert [e.label for e in processor.get_examples("test")] == [0.0] * 3


def test_rte_labels(fixtures_dir):
  processor = classifier_tasks.get_processor(
    "rte", str(fixtures_dir / "glue" / "RTE")
  )
  assert processor.get_labels() == ["entailment", "not_entailment"]
  dev = processor.get_examples("dev")
  assert [e.label for e in dev] == [
    "not_entailment",
    "entailment",
    "not_entailment",
    "not_entailment",
  ]
  assert dev[0].text_b == "Christopher Reeve had an accident."


def _write(path, rows, bom=False):
  path.parent.mkdir(parents=True, exist_ok=True)
  text = "".join("\t".join(row) + "\n" for row in rows)
  path.write_text(("\ufeff" if bom else "") + text, encoding="utf-8")


def test_mnli_matched_and_mismatched(tmp_path):
  _write(
    tmp_path / "train.tsv",
    [["h"] * 12, ["7"] + ["x"] * 7 + ["premise", "hypo", "n", "neutral"]],
  )
  for kind in ("matched", "mismatched"):
    _write(
      tmp_path / ("dev_%s.tsv" % kind),
      [
        ["h"] * 16,
        ["9"] + ["x"] * 7 + [kind, "h2"] + ["e"] * 5 + ["entailment"],
      ],
    )
    _write(
      tmp_path / ("test_%s.tsv" % kind),
      [["h"] * 10, ["3"] + ["x"] * 7 + [kind, "t2"]],
    )
  for task, kind in (("mnli", "matched"), ("MNLI-MM", "mismatched")):
    processor = classifier_tasks.get_processor(task, str(tmp_path))
    assert processor.get_labels() == ["contradiction", "entailment", "neutral"]
    (train,) = processor.get_examples("train")
    assert (train.guid, train.text_a, train.label) == (
      "train-7",
      "premise",
      "neutral",
    )
    (dev,) = processor.get_examples("dev")
    assert (dev.guid, dev.text_a, dev.label) == (
      "dev_%s-9" % kind,
      kind,
      "entailment",
    )
    (test,) = processor.get_examples("test")
    assert (test.guid, test.text_b, test.label) == (
      "test-3",
      "t2",
      "contradiction",
    )


@pytest.mark.parametrize(
  "task,train_row,test_row,labels",
  [
    (
      "qqp",
      ["5", "1", "2", "q one?", "q two?", "1"],
      ["5", "q one?", "q two?"],
      ["0", "1"],
    ),
    (
      "qnli",
      ["5", "q one?", "q two?", "not_entailment"],
      ["5", "q one?", "q two?"],
      ["entailment", "not_entailment"],
    ),
    (
      "wnli",
      ["5", "q one?", "q two?", "1"],
      ["5", "q one?", "q two?"],
      ["0", "1"],
    ),
  ],
)
def test_other_glue_pair_layouts(tmp_path, task, train_row, test_row, labels):
  _write(tmp_path / "train.tsv", [["header"] * len(train_row), train_row])
  _write(tmp_path / "test.tsv", [["header"] * len(test_row), test_row])
  processor = classifier_tasks.get_processor(task, str(tmp_path))
  assert processor.get_labels() == labels
  (train,) = processor.get_examples("train")
  assert (train.guid, train.text_a, train.text_b, train.label) == (
    "train-1",
    "q one?",
    "q two?",
    train_row[-1],
  )
  (test,) = processor.get_examples("test")
  assert (test.text_a, test.text_b, test.label) == (
    "q one?",
    "q two?",
    labels[0],
  )


def test_xnli_language_filter_and_contradictory(tmp_path):
  _write(
    tmp_path / "multinli" / "multinli.train.de.tsv",
    [["premise", "hypo", "label"], ["a", "b", "contradictory"]],
  )
  dev_row = lambda lang, label: (
    [lang, label]
    + ["p"] * 4
    + [  # pylint: disable=g-long-lambda
      "s1 " + lang,
      "s2",
    ]
  )
  _write(
    tmp_path / "xnli.dev.tsv",
    [["h"] * 8, dev_row("zh", "neutral"), dev_row("de", "entailment")],
  )
  processor = classifier_tasks.get_processor(
    "xnli", str(tmp_path), language="de"
  )
  (train,) = processor.get_examples("train")
  assert (train.guid, train.label) == ("train-1", "contradiction")
  (dev,) = processor.get_examples("dev")
  assert (dev.guid, dev.text_a, dev.label) == ("dev-2", "s1 de", "entailment")


def test_tsv_task(tmp_path):
  _write(
    tmp_path / "train.tsv",
    [["good stuff", "pos", "x"], ["bad \"stuff", "neg", "y"]],
    bom=True,
  )
  _write(tmp_path / "test.tsv", [["some text", "?", "z"]])
  processor = classifier_tasks.get_processor(
    "tsv",
    str(tmp_path),
    text_a_column=0,
    label_column=1,
    text_b_column=2,
    labels=["neg", "pos"],
  )
  train = processor.get_examples("train")
  # The BOM is dropped even without a header row.
  assert [(e.text_a, e.text_b, e.label) for e in train] == [
    ("good stuff", "x", "pos"),
    ("bad \"stuff", "y", "neg"),
  ]
  assert processor.get_examples("test")[0].label == "neg"
  regression = classifier_tasks.get_processor(
    "tsv",
    str(tmp_path),
    text_a_column=0,
    label_column=2,
    regression=True,
    skip_header=True,
  )
  with pytest.raises(InputError, match=r"train\.tsv:2: label 'y' is not a "):
    regression.get_examples("train")


@pytest.mark.parametrize(
  "options,message",
  [
    (dict(label_column=1, labels=["a"]), "needs --text_a_column"),
    (dict(text_a_column=0, label_column=1), "exactly one of"),
    (
      dict(text_a_column=0, label_column=1, labels=["a"], regression=True),
      "exactly one of",
    ),
    (dict(text_a_column=0, label_column=1, labels=["a", "a"]), "duplicate"),
  ],
)
def test_tsv_task_bad_options(options, message):
  with pytest.raises(InputError, match=message):
    classifier_tasks.get_task_spec("tsv", **options)


def test_unknown_task_lists_valid_names():
  with pytest.raises(InputError) as e:
    classifier_tasks.get_task_spec("glue")
  assert "--task_name=glue: unknown task; valid: cola, sst-2, mrpc" in str(
    e.value
  )
  assert "\n" not in str(e.value)


@pytest.mark.parametrize(
  "content,message",
  [
    ("", r"train\.tsv: empty file"),
    (
      "gj04\t1\n",
      r"train\.tsv:1: expected at least 4 tab-separated "
      "columns, found 2",
    ),
    (
      "gj04\t1\t\tok\ngj04\t2\t\tbad label\n",
      r"train\.tsv:2: unknown label '2' \(labels: 0, 1\)",
    ),
    ("\n\n", r"train\.tsv: no examples"),
    (
      "gj04\t1\t\tok\n" + "x" * 140000 + "\n",
      r"train\.tsv:2: field larger than field limit",
    ),
  ],
)
def test_bad_rows_name_file_and_line(tmp_path, content, message):
  (tmp_path / "train.tsv").write_text(content, encoding="utf-8")
  processor = classifier_tasks.get_processor("cola", str(tmp_path))
  with pytest.raises(InputError, match=message):
    processor.get_examples("train")


def test_missing_file(tmp_path):
  processor = classifier_tasks.get_processor("rte", str(tmp_path))
  with pytest.raises(InputError, match=r"dev\.tsv: no such file"):
    processor.get_examples("dev")
