"""CoNLL reader: columns, documents, IOB1 -> IOB2, labels, one-line errors."""

import subprocess
import sys

import pytest

from bert_tf.io_utils import InputError
from data_prep.ner import conll
from tests.conftest import FIXTURES
from tests.conftest import REPO
from tests.helpers.conll import CONLL_DIR
from tests.helpers.conll import requires_conll

NER = FIXTURES / "ner"


def test_reads_four_column_file_with_documents():
  sentences = conll.read_conll(str(NER / "train.txt"))
  assert len(sentences) == 8
  first = sentences[0]
  assert first.words == [
    "John",
    "Smith",
    "flew",
    "to",
    "London",
    "on",
    "Monday",
    ".",
  ]
  assert first.tags == ["B-PER", "I-PER", "O", "O", "B-LOC", "O", "O", "O"]
  assert first.lines == list(range(3, 11))
  assert [s.document for s in sentences] == [0, 0, 0, 1, 1, 1, 1, 1]
  assert conll.label_list(sentences) == [
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


def test_words_only_file_has_no_tags():
  sentences = conll.read_conll(str(NER / "test_words.txt"))
  assert [s.words for s in sentences] == [
    ["John", "visited", "Rome", "."],
    ["The", "council", "met", "."],
  ]
  assert not conll.is_labelled(sentences)


def test_iob1_is_converted_to_iob2():
  (sentence,) = conll.read_conll(str(NER / "iob1.txt"), "iob1")
  # B-PER in IOB1 only separates John from the adjacent Smith.
  assert sentence.tags == [
    "B-PER",
    "O",
    "B-PER",
    "I-PER",
    "O",
    "B-PER",
    "B-PER",
    "O",
    "B-LOC",
    "I-LOC",
    "O",
  ]
  (as_iob2,) = conll.read_conll(str(NER / "iob1.txt"), "iob2")
  assert as_iob2.tags[0] == "I-PER"  # read as is


def test_labels_flag_and_unknown_tags(tmp_path):
  assert conll.parse_labels("O, B-PER,I-PER") == ["O", "B-PER", "I-PER"]
  for bad in ("B-PER,I-PER", "O,PER", "O,O"):
    with pytest.raises(InputError, match="--labels="):
      conll.parse_labels(bad)
  path = tmp_path / "dev.txt"
  path.write_text("A B-PER\nb O\n\nC B-EVENT\n")
  with pytest.raises(InputError) as error:
    conll.check_tags(conll.read_conll(str(path)), ["O", "B-PER", "I-PER"])
  assert str(error.value).startswith("%s:4: unknown tag 'B-EVENT'" % path)


@pytest.mark.parametrize(
  "text, message",
  [
    (
      "a O\nb\n",
      ":2: malformed line: 1 columns, the file's first word line has 2",
    ),
    ("a NN O\nb NN PER\n", ":2: tag 'PER' is not IOB"),
    ("\n\n-DOCSTART- O\n\n", ": no sentences"),
  ],
)
def test_malformed_files_name_file_and_line(tmp_path, text, message):
  path = tmp_path / "bad.txt"
  path.write_text(text)
  with pytest.raises(InputError) as error:
    conll.read_conll(str(path))
  assert str(error.value).startswith(str(path) + message)
  assert "\n" not in str(error.value)


def test_bad_scheme_and_missing_file(tmp_path):
  with pytest.raises(InputError, match="--tag_scheme=iobes"):
    conll.read_conll(str(NER / "train.txt"), "iobes")
  with pytest.raises(InputError, match="no such file"):
    conll.read_conll(str(tmp_path / "none.txt"))


@requires_conll
def test_conll2003_counts():
  counts = {
    name: len(conll.read_conll(str(CONLL_DIR / name)))
    for name in ("train.txt", "valid.txt", "test.txt")
  }
  assert counts == {"train.txt": 14041, "valid.txt": 3250, "test.txt": 3453}


@pytest.mark.process
def test_data_prep_ner_is_tensorflow_free():
  code = (
    "import sys; import data_prep.ner.conll, data_prep.ner.features, "
    "data_prep.ner.records, data_prep.ner.evaluation; "
    "print('tensorflow' in sys.modules)"
  )
  result = subprocess.run(
    [sys.executable, "-c", code],
    cwd=REPO,
    capture_output=True,
    text=True,
    timeout=60,
    check=True,
  )
  assert result.stdout.strip() == "False"
