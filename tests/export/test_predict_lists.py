"""python -m bert_tf.predict with NER and multiple-choice SavedModels: list
inputs (`endings`, a JSON list in TSV too), padded outputs cut to each
row's length, and what one call of the signature gives; ragged batches of
lists end in one ERROR line naming the lines."""

import json

import pytest
import tensorflow as tf

from bert_tf.cli.predict import predict
from bert_tf.export.multiple_choice import MultipleChoiceExporter
from bert_tf.export.ner import NerExporter
from bert_tf.io_utils import InputError
from bert_tf.modeling.bert_config import BertConfig
from bert_tf.tasks.multiple_choice import MultipleChoiceModel
from bert_tf.tasks.ner import NerModel
from tests.conftest import FIXTURES
from tests.helpers.checkpoints import with_heads

pytestmark = pytest.mark.process  # trains or exports end to end in this process

VOCAB = str(FIXTURES / "encoder" / "vocab_small.txt")
CONFIG = BertConfig.from_json_file(
  str(FIXTURES / "encoder" / "ckpt_a" / "bert_config.json")
)
LABELS = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
TEXTS = ["Anna met Mary Jones in Paris .", "", "rain", "a b c d e f g h i j"]


def _export(tmp_path, name, model, cls, **options):
  """ckpt_a's encoder + `model`'s random head, exported by `cls`."""
  prefix = with_heads(tmp_path / name, "ckpt_a", model)
  exporter = cls(CONFIG, VOCAB, True, 8, options)
  exporter.restore(prefix)
  return exporter.save(str(tmp_path / (name + "_sm")))


@pytest.fixture(scope="module")
def models(tmp_path_factory):
  tmp_path = tmp_path_factory.mktemp("predict_lists")
  return {
    "ner": _export(
      tmp_path,
      "ner",
      NerModel(CONFIG, len(LABELS)),
      NerExporter,
      labels=LABELS,
    ),
    "mc": _export(
      tmp_path, "mc", MultipleChoiceModel(CONFIG), MultipleChoiceExporter
    ),
  }


def _signature(export_dir, **inputs):
  serving = tf.saved_model.load(export_dir).signatures["serving_default"]
  out = serving(**{k: tf.constant(v) for k, v in inputs.items()})
  return {k: v.numpy().tolist() for k, v in out.items()}


def _rows(path):
  return [json.loads(line) for line in path.read_text().splitlines()]


def test_ner_rows_are_cut_to_their_words(models, tmp_path):
  input_file, output_file = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
  input_file.write_text(
    "".join(
      json.dumps({"id": i, "text": t}) + "\n" for i, t in enumerate(TEXTS)
    )
  )
  predict(
    models["ner"],
    str(input_file),
    str(output_file),
    batch_size=3,
    progress=False,
  )
  want = _signature(models["ner"], text=TEXTS)
  for i, row in enumerate(_rows(output_file)):
    assert row["id"] == i
    assert row["words"] == TEXTS[i].split()
    n, k = want["num_words"][i], want["num_entities"][i]
    assert row["tags"] == [t.decode() for t in want["tags"][i][:n]]
    assert row["entity_start"] == want["entity_start"][i][:k]
    assert row["entity_type"] == [
      t.decode() for t in want["entity_type"][i][:k]
    ]
    assert all(tag in LABELS for tag in row["tags"])


def test_multiple_choice_lists(models, tmp_path):
  records = [
    {
      "context": "He opens the door.",
      "prefix": "He",
      "endings": ["walks in.", "sings.", "eats the door."],
    },
    {"context": "", "prefix": "", "endings": ["a", "b", ""]},
  ]
  input_file, output_file = tmp_path / "in.tsv", tmp_path / "out.jsonl"
  input_file.write_text(
    "context\tprefix\tendings\n"
    + "".join(
      "%s\t%s\t%s\n" % (r["context"], r["prefix"], json.dumps(r["endings"]))
      for r in records
    )
  )
  predict(models["mc"], str(input_file), str(output_file), progress=False)
  want = _signature(
    models["mc"], **{k: [r[k] for r in records] for k in records[0]}
  )
  rows = _rows(output_file)
  for row, probabilities, label in zip(
    rows, want["probabilities"], want["label"]
  ):
    assert row["probabilities"] == pytest.approx(probabilities, abs=1e-6)
    assert row["label"] == label

  ragged = tmp_path / "ragged.jsonl"
  ragged.write_text(
    "".join(
      json.dumps(dict(records[0], endings=e)) + "\n"
      for e in (["a", "b"], ["a", "b"], ["a"])
    )
  )
  with pytest.raises(
    InputError, match="line 3: 1 entries in 'endings', line 1 has 2"
  ):
    predict(
      models["mc"], str(ragged), str(tmp_path / "o.jsonl"), progress=False
    )
  ragged.write_text(json.dumps(dict(records[0], endings="x")) + "\n")
  with pytest.raises(
    InputError,
    match="line 1: field 'endings' missing or not a non-empty list of strings",
  ):
    predict(
      models["mc"], str(ragged), str(tmp_path / "o.jsonl"), progress=False
    )
  assert not (tmp_path / "o.jsonl").exists()
