"""python -m bert_tf.predict: JSON-lines and TSV records through exported
SavedModels in small batches give what one call of the signature gives;
bad records end in one ERROR line."""

import json
import os
import subprocess
import sys

import pytest
import tensorflow as tf

from bert_tf.cli.predict import predict
from bert_tf.export.classifier import ClassifierExporter
from bert_tf.export.squad import SquadExporter
from bert_tf.io_utils import InputError
from bert_tf.modeling.bert_config import BertConfig
from tests.conftest import FIXTURES
from tests.conftest import REPO
from tests.helpers.checkpoints import ckpt_prefix

pytestmark = pytest.mark.process  # starts programs

VOCAB = str(FIXTURES / "encoder" / "vocab_small.txt")
PAIRS = [
  ("Who won?", "Denver"),
  ("", ""),
  ("Café au lait", "x y z"),
  ("a b c d e f g h", "one\ttwo"),
]  # the tab only fits in JSON


def _export(tmp_path, cls, name, **options):
  config = BertConfig.from_json_file(
    str(FIXTURES / "encoder" / "ckpt_a" / "bert_config.json")
  )
  exporter = cls(config, VOCAB, True, 32, options)
  exporter.restore(ckpt_prefix("ckpt_a"))
  return exporter.save(str(tmp_path / name))


def _predict(*args):
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
  return subprocess.run(
    [sys.executable, "-m", "bert_tf.predict"] + list(args),
    cwd=REPO,
    env=env,
    capture_output=True,
    text=True,
    timeout=300,
    check=False,
  )


def _direct(export_dir, **inputs):
  serving = tf.saved_model.load(export_dir).signatures["serving_default"]
  out = serving(**{k: tf.constant(v) for k, v in inputs.items()})
  return {k: v.numpy().tolist() for k, v in out.items()}


@pytest.fixture(scope="module")
def models(tmp_path_factory):
  tmp_path = tmp_path_factory.mktemp("predict_models")
  return {
    "classifier": _export(
      tmp_path, ClassifierExporter, "cls", labels=["a", "b", "c"]
    ),
    "squad": _export(
      tmp_path, SquadExporter, "squad", doc_stride=8, max_query_length=8
    ),
  }


def test_jsonl_classifier(models, tmp_path):
  input_file, output_file = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
  input_file.write_text(
    "".join(
      json.dumps({"id": i, "text_a": a, "text_b": b}) + "\n"
      for i, (a, b) in enumerate(PAIRS)
    )
  )
  result = _predict(
    "--export_dir=%s" % models["classifier"],
    "--input_file=%s" % input_file,
    "--output_file=%s" % output_file,
    "--batch_size=3",
  )
  assert result.returncode == 0, result.stderr[-2000:]
  rows = [json.loads(line) for line in output_file.read_text().splitlines()]
  want = _direct(
    models["classifier"],
    text_a=[a for a, _ in PAIRS],
    text_b=[b for _, b in PAIRS],
  )
  assert [r["id"] for r in rows] == [0, 1, 2, 3]
  assert [r["label"] for r in rows] == [l.decode() for l in want["label"]]
  for row, probabilities in zip(rows, want["probabilities"]):
    assert row["probabilities"] == pytest.approx(probabilities, abs=1e-6)


def test_keep_inputs_copies_the_whole_record(models, tmp_path):
  input_file, output_file = tmp_path / "in.tsv", tmp_path / "out.jsonl"
  input_file.write_text(
    "text_b\tid\ttext_a\n"
    + "".join("%s\t%d\t%s\n" % (b, i, a) for i, (a, b) in enumerate(PAIRS[:2]))
  )
  assert (
    predict(
      models["classifier"],
      str(input_file),
      str(output_file),
      progress=False,
      keep_inputs=True,
    )
    == 2
  )
  rows = [json.loads(line) for line in output_file.read_text().splitlines()]
  assert [list(r)[:3] for r in rows] == [["text_b", "id", "text_a"]] * 2
  assert [(r["id"], r["text_a"], r["text_b"]) for r in rows] == [
    ("0", "Who won?", "Denver"),
    ("1", "", ""),
  ]
  outputs = set(_direct(models["classifier"], text_a=["x"], text_b=["y"]))
  assert [set(r) for r in rows] == [{"id", "text_a", "text_b"} | outputs] * 2
  predict(
    models["classifier"], str(input_file), str(output_file), progress=False
  )
  rows = [json.loads(line) for line in output_file.read_text().splitlines()]
  assert [set(r) for r in rows] == [{"id"} | outputs] * 2


def test_tsv_squad(models, tmp_path):
  questions = [
    ("q1", "where was it?", "It was played in Santa Clara."),
    ("q2", "who?", "Denver beat Carolina , 24 - 10 ."),
  ]
  input_file, output_file = tmp_path / "in.tsv", tmp_path / "out.jsonl"
  input_file.write_text(
    "id\tquestion\tcontext\n" + "".join("\t".join(q) + "\n" for q in questions)
  )
  result = _predict(
    "--export_dir=%s" % models["squad"],
    "--input_file=%s" % input_file,
    "--output_file=%s" % output_file,
    "--batch_size=1",
  )
  assert result.returncode == 0, result.stderr[-2000:]
  rows = [json.loads(line) for line in output_file.read_text().splitlines()]
  want = _direct(
    models["squad"],
    question=[q for _, q, _ in questions],
    context=[c for _, _, c in questions],
  )
  assert [r["id"] for r in rows] == ["q1", "q2"]
  assert [r["answer"] for r in rows] == [a.decode() for a in want["answer"]]
  assert [r["start_char"] for r in rows] == want["start_char"]


@pytest.mark.parametrize(
  "content, message",
  [
    ('{"text_a": "x"}\n', "line 1: field 'text_b' missing"),
    ('{"text_a": "x", "text_b": 3}\n', "line 1: field 'text_b'"),
    ('{"text_a": "x", "text_b": ""}\nnot json\n', "line 2: not JSON"),
    ('[1, 2]\n', "line 1: not a JSON object"),
  ],
)
def test_bad_records(models, tmp_path, content, message):
  input_file, output_file = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
  input_file.write_text(content)
  with pytest.raises(InputError, match=message):
    predict(
      models["classifier"], str(input_file), str(output_file), progress=False
    )
  assert not output_file.exists()


def test_bad_record_is_one_error_line(models, tmp_path):
  input_file = tmp_path / "in.tsv"
  input_file.write_bytes(b"text_a\ttext_b\nok\tfine\nbad \xff\tx\n")
  result = _predict(
    "--export_dir=%s" % models["classifier"],
    "--input_file=%s" % input_file,
    "--output_file=%s" % (tmp_path / "out.jsonl"),
  )
  assert result.returncode == 1
  assert (
    result.stderr.strip()
    .splitlines()[-1]
    .startswith("ERROR: %s line 3: not UTF-8" % input_file)
  )
  assert not (tmp_path / "out.jsonl").exists()
