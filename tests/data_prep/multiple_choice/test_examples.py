"""SWAG CSV and JSON-lines reading: hand-written fixture files (tests/fixtures
/swag, the published column layout with its unnamed index column; test.csv
without labels) and one-line errors naming file and line."""

import pytest

from bert_tf.io_utils import InputError
from data_prep.multiple_choice.examples import MultipleChoiceExample
from data_prep.multiple_choice.examples import read_examples
from data_prep.multiple_choice.examples import split_file
from tests.conftest import FIXTURES

SWAG = FIXTURES / "swag"
HEADER = (
  "video-id,fold-ind,startphrase,sent1,sent2,gold-source,ending0,"
  "ending1,ending2,ending3"
)


def _write(tmp_path, name, text):
  path = tmp_path / name
  path.write_text(text, encoding="utf-8")
  return str(path)


def test_swag_train_with_index_column():
  examples = read_examples(str(SWAG / "train.csv"), "train")
  assert len(examples) == 8
  assert examples[0] == MultipleChoiceExample(
    "train-0",
    "The man opens the door of the house.",
    "He",
    [
      "walks into the room.",
      "eats the door with a spoon.",
      "flies over the moon, singing.",
      "turns into a tree.",
    ],
    0,
  )
  assert examples[2].endings[1] == "says hello, then listens."
  assert examples[6].prefix == "The dog"
  assert [e.label for e in examples] == [0, 2, 1, 3, 0, 1, 2, 0]


def test_swag_test_file_has_no_labels():
  examples = read_examples(str(SWAG / "test.csv"), "test")
  assert [e.guid for e in examples] == ["test-0", "test-1", "test-2"]
  assert [e.label for e in examples] == [0, 0, 0]  # the dummy label
  assert examples[1].endings == [
    "burns in the water.",
    "swims to the other side.",
    "eats the pool.",
    "paints the pool, then flies.",
  ]


def test_swag_without_index_column_and_with_bom(tmp_path):
  path = _write(
    tmp_path,
    "val.csv",
    "\ufeff" + HEADER + ",label\r\nv1,7,A b. C,A b.,C,gold,d.,e.,f.,g.,3\r\n",
  )
  assert read_examples(path, "dev") == [
    MultipleChoiceExample("dev-0", "A b.", "C", ["d.", "e.", "f.", "g."], 3)
  ]


def test_split_files(tmp_path):
  assert split_file(str(SWAG), "dev") == str(SWAG / "val.csv")
  _write(tmp_path, "dev.jsonl", "")
  assert split_file(str(tmp_path), "dev") == str(tmp_path / "dev.jsonl")
  _write(tmp_path, "val.csv", "")
  with pytest.raises(
    InputError, match="both val.csv and dev.jsonl for the dev split; keep one"
  ):
    split_file(str(tmp_path), "dev")
  with pytest.raises(
    InputError,
    match="no train file "
    r"\(train.csv or train.jsonl\)",
  ):
    split_file(str(tmp_path), "train")


def test_jsonl_any_number_of_choices(tmp_path):
  path = _write(
    tmp_path,
    "train.jsonl",
    '{"id": "q1", "context": "It rains.", "prefix": "We", '
    '"endings": ["stay in.", "swim.", "fly."], "label": 0}\n\n'
    '{"context": "Hot.", "endings": ["a", "b", "c"], '
    '"label": "2"}\n',
  )
  assert read_examples(path, "train") == [
    MultipleChoiceExample(
      "q1", "It rains.", "We", ["stay in.", "swim.", "fly."], 0
    ),
    MultipleChoiceExample("train-1", "Hot.", "", ["a", "b", "c"], 2),
  ]
  test = _write(
    tmp_path, "test.jsonl", '{"context": "x", "endings": ["y", "z"]}\n'
  )
  assert read_examples(test, "test")[0].label == 0


@pytest.mark.parametrize(
  "name,text,split,message",
  [
    (
      "train.csv",
      "," + HEADER + ",label\n0,v,1,s,a,b,g,e0,e1,e2,e3,0\n"
      "1,v,1,s,a,b,g,e0,e1,e2,0\n",
      "train",
      "{}:3: expected 12 comma-separated columns (as the header), found 11",
    ),
    (
      "train.csv",
      "," + HEADER + ",label\n0,v,1,s,a,b,g,e0,e1,e2,e3,4\n",
      "train",
      "{}:2: label 4 out of range for 4 choices (0-3)",
    ),
    (
      "train.csv",
      "," + HEADER + ",label\n0,v,1,s,a,b,g,e0,e1,e2,e3,x\n",
      "train",
      "{}:2: label 'x' is not a choice index",
    ),
    (
      "train.csv",
      "," + HEADER + "\n0,v,1,s,a,b,g,e0,e1,e2,e3\n",
      "train",
      "{}:1: header lacks label (header: ,video-id,",
    ),
    ("train.csv", "", "train", "{}: empty file"),
    ("val.csv", "," + HEADER + ",label\n", "dev", "{}: no examples"),
    (
      "train.jsonl",
      '{"context": "c", "endings": ["a", "b", "c"], '
      '"label": 1}\n{"context": "c", "endings": ["a", "b"], "label": 1}\n',
      "train",
      "{}:2: 2 endings, but line 1 has 3 (every example of a file "
      "needs the same number of choices)",
    ),
    (
      "train.jsonl",
      '{"context": "c", "endings": ["a", "b"], "label": 2}\n',
      "train",
      "{}:1: label 2 out of range for 2 choices (0-1)",
    ),
    (
      "train.jsonl",
      '{"context": "c", "endings": ["a", "b"], "label": true}\n',
      "train",
      "{}:1: label True is not a choice index",
    ),
    (
      "dev.jsonl",
      '{"context": "c", "endings": ["a", "b"]}\n',
      "dev",
      "{}:1: missing 'label'",
    ),
    (
      "train.jsonl",
      '{"endings": ["a", "b"], "label": 0}\n',
      "train",
      "{}:1: missing 'context'",
    ),
    (
      "train.jsonl",
      '{"context": "c", "endings": ["a"], "label": 0}\n',
      "train",
      '{}:1: "endings" must be a list of at least 2 strings',
    ),
    (
      "train.jsonl",
      '{"context": "c",\n',
      "train",
      "{}:1: not valid JSON (Expecting property name",
    ),
  ],
)
def test_bad_input_names_file_and_line(tmp_path, name, text, split, message):
  path = _write(tmp_path, name, text)
  with pytest.raises(InputError) as error:
    read_examples(path, split)
  assert str(error.value).startswith(message.format(path))
  assert "\n" not in str(error.value)
