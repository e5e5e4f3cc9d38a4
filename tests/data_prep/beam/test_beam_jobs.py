"""The Beam drivers (`--runner=DirectRunner`) against the single-process
paths: pre-training shards are the process pool's bytes, deterministic for a
seed and different for another; SQuAD shards concatenate to the single
process's TFRecord and sidecar (unique ids included); a bad input line fails
the pipeline with the single-process message and leaves no shard; killing a
`--num_workers` job leaves no worker alive and no shard set."""

import gzip
import os
import signal
import subprocess
import sys
import time

from tests.conftest import FIXTURES
from tests.conftest import REPO

VOCAB = "--vocab_file=%s" % (FIXTURES / "vocab_uncased.txt")
PRETRAINING = [VOCAB, "--max_seq_length=32", "--max_predictions_per_seq=5",
               "--dupe_factor=2"]


def _run(module, *args):
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
  return subprocess.run([sys.executable, "-m", module] + list(args),
                        cwd=REPO, env=env, capture_output=True, text=True,
                        timeout=300, check=False)


def _ok(result):
  assert result.returncode == 0, result.stderr[-3000:]


def _corpus(folder, copies=8):
  """The sample corpus, `copies` times (several documents per shard)."""
  text = (FIXTURES / "pretraining" / "sample_text.txt").read_text()
  path = folder / "corpus.txt"
  path.write_text("\n".join([text.strip()] * copies) + "\n")
  return path


def _shards(prefix):
  return sorted(prefix.parent.glob(prefix.name + "-*"))


def test_pretraining_beam_equals_the_pool_and_follows_the_seed(tmp_path):
  corpus = _corpus(tmp_path)
  args = ["--input_file=%s" % corpus] + PRETRAINING
  pool = tmp_path / "pool" / "pt.tfrecord"
  _ok(_run("data_prep.create_pretraining_data", *args,
           "--output_file=%s" % pool, "--num_workers=3"))
  runs = {}
  for name, seed, extra in [("a", 12345, []), ("b", 12345, [
      "--direct_num_workers=2", "--direct_running_mode=multi_processing"]),
                            ("c", 7, [])]:
    prefix = tmp_path / name / "pt.tfrecord"
    _ok(_run("data_prep.create_pretraining_data", *args, *extra,
             "--output_file=%s" % prefix, "--runner=DirectRunner",
             "--num_output_shards=3", "--random_seed=%d" % seed))
    runs[name] = [p.read_bytes() for p in _shards(prefix)]
  expected = [p.read_bytes() for p in _shards(pool)]
  assert [p.name for p in _shards(pool)] == [
      "pt.tfrecord-%05d-of-00003" % i for i in range(3)]
  assert runs["a"] == expected and runs["b"] == expected
  assert len(runs["c"]) == 3 and runs["c"] != expected


def test_squad_beam_shards_concatenate_to_the_single_process_files(
    tmp_path):
  source = tmp_path / "small_v1.json"
  source.write_bytes(gzip.decompress(
      (FIXTURES / "squad" / "small_v1.json.gz").read_bytes()))
  common = ["--input_file=%s" % source, VOCAB, "--max_seq_length=128",
            "--doc_stride=64", "--max_query_length=32"]
  single = tmp_path / "single.tf_record"
  _ok(_run("data_prep.squad", *common, "--output_file=%s" % single))
  beam = tmp_path / "beam.tf_record"
  _ok(_run("data_prep.squad", *common, "--output_file=%s" % beam,
           "--runner=DirectRunner", "--num_output_shards=3"))
  records = [p for p in _shards(beam) if "features" not in p.name]
  sidecars = _shards(tmp_path / "beam.tf_record.features.jsonl")
  assert len(records) == len(sidecars) == 3
  assert b"".join(p.read_bytes() for p in records) == single.read_bytes()
  # Each sidecar shard starts with the settings header, then its lines.
  lines = [p.read_text().splitlines(True) for p in sidecars]
  expected = (tmp_path / "single.tf_record.features.jsonl").read_text(
  ).splitlines(True)
  assert all(shard[0] == expected[0] for shard in lines)
  assert [line for shard in lines for line in shard[1:]] == expected[1:]
  assert all(len(shard) > 1 for shard in lines)


def test_a_bad_line_fails_like_the_single_process_path(tmp_path):
  corpus = _corpus(tmp_path, copies=2)
  corpus.write_bytes(corpus.read_bytes() + b"caf\xe9 latin-1\n")
  outputs = {}
  for name, extra in [("single", []), ("beam", ["--runner=DirectRunner"])]:
    prefix = tmp_path / name / "pt.tfrecord"
    result = _run("data_prep.create_pretraining_data",
                  "--input_file=%s" % corpus, *PRETRAINING, *extra,
                  "--output_file=%s" % prefix)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines()
              if line.startswith("ERROR:")]
    assert len(errors) == 1, result.stderr[-3000:]
    outputs[name] = errors[0]
    assert not prefix.parent.exists() or not list(prefix.parent.iterdir())
  assert outputs["beam"] == outputs["single"]
  assert str(corpus) in outputs["beam"]


def _children(pid):
  found = []
  for entry in os.listdir("/proc"):
    if entry.isdigit():
      try:
        with open("/proc/%s/stat" % entry) as f:
          fields = f.read().rsplit(")", 1)[1].split()
      except OSError:
        continue
      if int(fields[1]) == pid and fields[0] != "Z":
        found.append(int(entry))
  return found


def test_killing_a_pool_job_leaves_no_workers_and_no_shards(tmp_path):
  corpus = _corpus(tmp_path, copies=400)
  prefix = tmp_path / "out" / "pt.tfrecord"
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
  process = subprocess.Popen(
      [sys.executable, "-m", "data_prep.create_pretraining_data",
       "--input_file=%s" % corpus, *PRETRAINING, "--dupe_factor=10",
       "--output_file=%s" % prefix, "--num_workers=2", "--shard_size_mb=1"],
      cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
  deadline = time.time() + 60
  workers = []
  while len(workers) < 2:
    assert process.poll() is None and time.time() < deadline
    workers = _children(process.pid)
    time.sleep(0.05)
  process.send_signal(signal.SIGKILL)
  process.wait()
  deadline = time.time() + 10
  while any(_alive(w) for w in workers):
    assert time.time() < deadline, "orphan workers %s" % workers
    time.sleep(0.05)
  assert not _shards(prefix)


def _alive(pid):
  try:
    with open("/proc/%d/stat" % pid) as f:
      return f.read().rsplit(")", 1)[1].split()[0] != "Z"
  except OSError:
    return False


def test_classifier_beam_shards_concatenate_to_the_single_process_file(
    tmp_path):
  rows = ["label\ttext"] + ["%s\tsentence number %d is %s" % (
      ("neg", "pos")[i % 2], i, ("bad", "good")[i % 2]) for i in range(2500)]
  (tmp_path / "train.tsv").write_text("\n".join(rows) + "\n")
  common = ["--task_name=tsv", "--data_dir=%s" % tmp_path, "--skip_header",
            "--label_column=0", "--text_a_column=1", "--labels=neg,pos",
            VOCAB, "--max_seq_length=16"]
  single = tmp_path / "single.tf_record"
  _ok(_run("data_prep.classifier", *common, "--output_file=%s" % single))
  beam = tmp_path / "beam.tf_record"
  _ok(_run("data_prep.classifier", *common, "--output_file=%s" % beam,
           "--runner=DirectRunner", "--num_output_shards=3"))
  shards = _shards(beam)
  assert len(shards) == 3
  assert b"".join(p.read_bytes() for p in shards) == single.read_bytes()
  # A malformed row: the same one line, no output.
  (tmp_path / "train.tsv").write_text("\n".join(rows[:50] + ["pos"]) + "\n")
  errors = []
  for output, extra in [(single, []), (beam, ["--runner=DirectRunner"])]:
    result = _run("data_prep.classifier", *common,
                  "--output_file=%s.bad" % output, *extra)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    errors.append([line for line in result.stderr.splitlines()
                   if line.startswith("ERROR:")])
  assert len(errors[0]) == 1 and errors[0] == errors[1]
  assert "train.tsv:51:" in errors[0][0]  # the header is line 1
  assert not list(tmp_path.glob("*.bad*"))
