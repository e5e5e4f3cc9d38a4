"""--spm_model_file on the data_prep jobs that gained it (classifier, squad,
squad_predictions): SentencePiece ids in the records, the Beam shards equal to
the single-process file, and answers projected back onto the context."""

import gzip
import json
import os
import random
import subprocess
import sys

import pytest
import sentencepiece as spm

from data_prep.squad import postprocess
from data_prep.squad import raw_results
from data_prep.squad.example import read_squad_examples
from data_prep.squad.records import read_features_sidecar
from tests.conftest import FIXTURES
from tests.conftest import REPO
from tests.helpers.sentencepiece_model import train_model

pytestmark = pytest.mark.process  # runs the jobs as programs

ROWS = [("pos", "John flew to Paris ."), ("neg", "It rained all day .")] * 3


def _job(module, *args):
  """Runs `python -m module args...`; it must succeed."""
  result = subprocess.run(
    [sys.executable, "-m", module] + list(args),
    cwd=REPO,
    env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"),
    capture_output=True,
    text=True,
    timeout=300,
    check=False,
  )
  assert result.returncode == 0, result.stderr[-3000:]


def _shards(prefix):
  return sorted(prefix.parent.glob(prefix.name + "-*"))


def _input_ids(path, length):
  import tensorflow as tf  # pylint: disable=g-import-not-at-top

  spec = {"input_ids": tf.io.FixedLenFeature([length], tf.int64)}
  return [
    tf.io.parse_single_example(record, spec)["input_ids"].numpy().tolist()
    for record in tf.data.TFRecordDataset(str(path))
  ]


def _squad(tmp_path):
  data = json.loads(
    gzip.decompress(
      (FIXTURES / "squad" / "small_v1_first_answer.json.gz").read_bytes()
    )
  )
  data["data"] = data["data"][:1]
  data["data"][0]["paragraphs"] = data["data"][0]["paragraphs"][:2]
  path = tmp_path / "squad.json"
  path.write_text(json.dumps(data))
  return path, data


def test_classifier_and_squad_with_sentencepiece(tmp_path):
  squad_file, data = _squad(tmp_path)
  contexts = [p["context"] for p in data["data"][0]["paragraphs"]]
  model_file = train_model(tmp_path, contexts + [t for _, t in ROWS], 300)
  sp = spm.SentencePieceProcessor(model_file=model_file)
  spm_flag = "--spm_model_file=%s" % model_file

  (tmp_path / "train.tsv").write_text("".join("%s\t%s\n" % r for r in ROWS))
  classifier = [
    "--task_name=tsv",
    "--label_column=0",
    "--text_a_column=1",
    "--labels=neg,pos",
    "--max_seq_length=16",
    "--data_dir=%s" % tmp_path,
    spm_flag,
  ]
  single = tmp_path / "classifier.tf_record"
  _job("data_prep.classifier", *classifier, "--output_file=%s" % single)
  ids = (
    [sp.PieceToId("[CLS]")]
    + sp.EncodeAsIds(ROWS[0][1].lower())
    + [sp.PieceToId("[SEP]")]
  )
  assert _input_ids(single, 16)[0][: len(ids)] == ids
  beam = tmp_path / "classifier_beam.tf_record"
  _job(
    "data_prep.classifier",
    *classifier,
    "--output_file=%s" % beam,
    "--runner=DirectRunner",
  )
  assert b"".join(p.read_bytes() for p in _shards(beam)) == (
    single.read_bytes()
  )

  squad = [
    "--input_file=%s" % squad_file,
    spm_flag,
    "--max_seq_length=96",
    "--doc_stride=48",
    "--max_query_length=24",
  ]
  single = tmp_path / "squad.tf_record"
  _job("data_prep.squad", *squad, "--output_file=%s" % single)
  question = data["data"][0]["paragraphs"][0]["qas"][0]["question"]
  ids = [sp.PieceToId("[CLS]")] + sp.EncodeAsIds(question.lower())[:24]
  assert _input_ids(single, 96)[0][: len(ids)] == ids
  beam = tmp_path / "squad_beam.tf_record"
  _job(
    "data_prep.squad",
    *squad,
    "--output_file=%s" % beam,
    "--runner=DirectRunner",
  )
  assert (
    b"".join(p.read_bytes() for p in _shards(beam) if "features" not in p.name)
    == single.read_bytes()
  )

  # Re-scoring random logits: the CLI projects SentencePiece spans (piece
  # precise, "the Ar"), not WordPiece ones (whole words, "the Arabic").
  rng = random.Random(0)
  raw = tmp_path / "raw_results.jsonl"
  with (
    open(tmp_path / "squad.tf_record.features.jsonl") as sidecar,
    open(raw, "w") as out,
  ):
    next(sidecar)  # the settings header
    for line in sidecar:
      out.write(
        json.dumps(
          {
            "unique_id": json.loads(line)["unique_id"],
            "start_logits": [rng.random() for _ in range(96)],
            "end_logits": [rng.random() for _ in range(96)],
          }
        )
        + "\n"
      )
  _job(
    "data_prep.squad_predictions",
    "--predict_file=%s" % squad_file,
    "--raw_results_file=%s" % raw,
    "--output_dir=%s" % tmp_path,
    *squad[1:],
  )
  predictions = json.loads((tmp_path / "predictions.json").read_text())
  examples = read_squad_examples(str(squad_file), False, False)
  features = read_features_sidecar(
    str(tmp_path / "squad.tf_record.features.jsonl")
  )[1]
  results = raw_results.read_raw_results(str(raw), 96)
  by_mode = [
    postprocess.compute_predictions(
      examples, features, results, 20, 30, True, False, 0.0, sentencepiece
    ).predictions
    for sentencepiece in (False, True)
  ]
  assert by_mode[0] != by_mode[1]
  assert predictions == by_mode[1]
