"""kill -9 of a job whose worker processes write its output: no worker
outlives it and no file of the output is left, neither a finished temp nor
one half written (data_prep/common/outputs.py)."""

import gzip
import json
import time

import pytest

from tests.conftest import FIXTURES
from tests.helpers.pool_children import children_of
from tests.helpers.pool_children import running
from tests.helpers.processes import kill_when
from tests.helpers.processes import start

pytestmark = pytest.mark.process  # starts programs

VOCAB = "--vocab_file=%s" % (FIXTURES / "vocab_uncased.txt")


def _kill_and_wait(process, ready, what):
  """kill -9 `process` once `ready()`; returns when its workers are gone."""
  workers = []

  def workers_and_ready():
    workers[:] = children_of(process.pid)
    return len(workers) >= 2 and ready()

  kill_when(process, workers_and_ready, what, timeout=120)
  deadline = time.time() + 10
  while any(map(running, workers)):
    assert time.time() < deadline, "orphan workers %s" % workers
    time.sleep(0.05)


def test_pretraining_pool_with_a_finished_and_a_half_written_shard(tmp_path):
  text = (FIXTURES / "pretraining" / "sample_text.txt").read_text()
  corpus = tmp_path / "corpus.txt"
  corpus.write_text("\n".join([text.strip()] * 600) + "\n")  # 3 shards
  out = tmp_path / "out"
  process = start(
    "-m",
    "data_prep.create_pretraining_data",
    "--input_file=%s" % corpus,
    VOCAB,
    "--max_seq_length=32",
    "--max_predictions_per_seq=5",
    "--dupe_factor=10",
    "--output_file=%s" % (out / "pt.tfrecord"),
    "--num_workers=2",
    "--shard_size_mb=1",
    quiet=True,
  )

  def finished_and_writing():
    names = [p.name for p in out.glob("*")]
    return any(n.endswith(".tmp-shard") for n in names) and any(
      ".tmp-shard.tmp-" in n for n in names
    )

  _kill_and_wait(process, finished_and_writing, "finished shard")
  assert not list(out.iterdir())


def test_squad_pool_while_workers_append(tmp_path):
  with gzip.open(FIXTURES / "squad" / "small_v1.json.gz", "rt") as f:
    articles = json.load(f)["data"]
  squad = {"version": "1.1", "data": []}
  for copy in range(40):
    for article in json.loads(json.dumps(articles)):
      for paragraph in article["paragraphs"]:
        for qa in paragraph["qas"]:
          qa["id"] += "-%d" % copy
      squad["data"].append(article)
  source = tmp_path / "dev.json"
  source.write_text(json.dumps(squad))
  out = tmp_path / "out"
  process = start(
    "-m",
    "data_prep.squad",
    "--input_file=%s" % source,
    "--output_file=%s" % (out / "eval.tf_record"),
    VOCAB,
    "--num_workers=2",
    quiet=True,
  )

  def records_written():
    return any(
      ".tf_record.tmp-" in p.name and p.stat().st_size > 0
      for p in out.glob("*")
    )

  _kill_and_wait(process, records_written, "records")
  assert not list(out.iterdir())
