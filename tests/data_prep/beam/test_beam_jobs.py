"""The Beam drivers (`--runner=DirectRunner`) against the single-process
paths: pre-training shards are the process pool's bytes, deterministic for a
seed and different for another; SQuAD shards concatenate to the single
process's TFRecord and sidecar (unique ids included); a bad input line fails
the pipeline with the single-process message and leaves no shard."""

import gzip

import pytest

from tests.conftest import FIXTURES
from tests.helpers.processes import run

pytestmark = pytest.mark.process  # starts programs

VOCAB = "--vocab_file=%s" % (FIXTURES / "vocab_uncased.txt")
PRETRAINING = [
  VOCAB,
  "--max_seq_length=32",
  "--max_predictions_per_seq=5",
  "--dupe_factor=2",
]


def _run(module, *args):
  return run(["-m", module, *args])


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
  _ok(
    _run(
      "data_prep.create_pretraining_data",
      *args,
      "--output_file=%s" % pool,
      "--num_workers=3",
    )
  )
  runs = {}
  for name, seed, extra in [
    ("a", 12345, []),
    (
      "b",
      12345,
      ["--direct_num_workers=2", "--direct_running_mode=multi_processing"],
    ),
    ("c", 7, []),
  ]:
    prefix = tmp_path / name / "pt.tfrecord"
    _ok(
      _run(
        "data_prep.create_pretraining_data",
        *args,
        *extra,
        "--output_file=%s" % prefix,
        "--runner=DirectRunner",
        "--num_output_shards=3",
        "--random_seed=%d" % seed,
      )
    )
    runs[name] = [p.read_bytes() for p in _shards(prefix)]
  expected = [p.read_bytes() for p in _shards(pool)]
  assert [p.name for p in _shards(pool)] == [
    "pt.tfrecord-%05d-of-00003" % i for i in range(3)
  ]
  assert runs["a"] == expected and runs["b"] == expected
  assert len(runs["c"]) == 3 and runs["c"] != expected


def test_squad_beam_shards_concatenate_to_the_single_process_files(tmp_path):
  source = tmp_path / "small_v1.json"
  source.write_bytes(
    gzip.decompress((FIXTURES / "squad" / "small_v1.json.gz").read_bytes())
  )
  common = [
    "--input_file=%s" % source,
    VOCAB,
    "--max_seq_length=128",
    "--doc_stride=64",
    "--max_query_length=32",
  ]
  single = tmp_path / "single.tf_record"
  _ok(_run("data_prep.squad", *common, "--output_file=%s" % single))
  beam = tmp_path / "beam.tf_record"
  _ok(
    _run(
      "data_prep.squad",
      *common,
      "--output_file=%s" % beam,
      "--runner=DirectRunner",
      "--num_output_shards=3",
    )
  )
  records = [p for p in _shards(beam) if "features" not in p.name]
  sidecars = _shards(tmp_path / "beam.tf_record.features.jsonl")
  assert len(records) == len(sidecars) == 3
  assert b"".join(p.read_bytes() for p in records) == single.read_bytes()
  # Each sidecar shard starts with the settings header, then its lines.
  lines = [p.read_text().splitlines(True) for p in sidecars]
  expected = (
    (tmp_path / "single.tf_record.features.jsonl").read_text().splitlines(True)
  )
  assert all(shard[0] == expected[0] for shard in lines)
  assert [line for shard in lines for line in shard[1:]] == expected[1:]
  assert all(len(shard) > 1 for shard in lines)


def test_a_bad_line_fails_like_the_single_process_path(tmp_path):
  corpus = _corpus(tmp_path, copies=2)
  corpus.write_bytes(corpus.read_bytes() + b"caf\xe9 latin-1\n")
  outputs = {}
  for name, extra in [("single", []), ("beam", ["--runner=DirectRunner"])]:
    prefix = tmp_path / name / "pt.tfrecord"
    result = _run(
      "data_prep.create_pretraining_data",
      "--input_file=%s" % corpus,
      *PRETRAINING,
      *extra,
      "--output_file=%s" % prefix,
    )
    assert result.returncode == 1 and "Traceback" not in result.stderr
    errors = [
      line for line in result.stderr.splitlines() if line.startswith("ERROR:")
    ]
    assert len(errors) == 1, result.stderr[-3000:]
    outputs[name] = errors[0]
    assert not prefix.parent.exists() or not list(prefix.parent.iterdir())
  assert outputs["beam"] == outputs["single"]
  assert str(corpus) in outputs["beam"]


def test_classifier_beam_shards_concatenate_to_the_single_process_file(
  tmp_path,
):
  rows = ["label\ttext"] + [
    "%s\tsentence number %d is %s"
    % (("neg", "pos")[i % 2], i, ("bad", "good")[i % 2])
    for i in range(2500)
  ]
  (tmp_path / "train.tsv").write_text("\n".join(rows) + "\n")
  common = [
    "--task_name=tsv",
    "--data_dir=%s" % tmp_path,
    "--skip_header",
    "--label_column=0",
    "--text_a_column=1",
    "--labels=neg,pos",
    VOCAB,
    "--max_seq_length=16",
  ]
  single = tmp_path / "single.tf_record"
  _ok(_run("data_prep.classifier", *common, "--output_file=%s" % single))
  beam = tmp_path / "beam.tf_record"
  _ok(
    _run(
      "data_prep.classifier",
      *common,
      "--output_file=%s" % beam,
      "--runner=DirectRunner",
      "--num_output_shards=3",
    )
  )
  shards = _shards(beam)
  assert len(shards) == 3
  assert b"".join(p.read_bytes() for p in shards) == single.read_bytes()
  # A malformed row: the same one line, no output.
  (tmp_path / "train.tsv").write_text("\n".join(rows[:50] + ["pos"]) + "\n")
  errors = []
  for output, extra in [(single, []), (beam, ["--runner=DirectRunner"])]:
    result = _run(
      "data_prep.classifier", *common, "--output_file=%s.bad" % output, *extra
    )
    assert result.returncode == 1 and "Traceback" not in result.stderr
    errors.append(
      [line for line in result.stderr.splitlines() if line.startswith("ERROR:")]
    )
  assert len(errors[0]) == 1 and errors[0] == errors[1]
  assert "train.tsv:51:" in errors[0][0]  # the header is line 1
  assert not list(tmp_path.glob("*.bad*"))


def _concatenation_equals_single(tmp_path, module, args, shards):
  single = tmp_path / "single.tf_record"
  _ok(_run(module, *args, "--output_file=%s" % single))
  beam = tmp_path / "beam.tf_record"
  _ok(
    _run(
      module,
      *args,
      "--output_file=%s" % beam,
      "--runner=DirectRunner",
      "--num_output_shards=%d" % shards,
    )
  )
  files = _shards(beam)
  assert len(files) == shards
  assert all(f.stat().st_size for f in files)
  assert b"".join(f.read_bytes() for f in files) == single.read_bytes()


def test_ner_and_multiple_choice_beam_shards(tmp_path):
  # 160 documents of 8 sentences: chunks of whole documents, 3 shards.
  conll = tmp_path / "train.txt"
  conll.write_text((FIXTURES / "ner" / "train.txt").read_text() * 160)
  _concatenation_equals_single(
    tmp_path,
    "data_prep.ner",
    [
      "--input_file=%s" % conll,
      VOCAB,
      "--max_seq_length=24",
      "--document_context",
    ],
    3,
  )
  # 2,400 SWAG rows: chunks of 1,000 examples, 2 shards.
  lines = (FIXTURES / "swag" / "train.csv").read_text().splitlines(True)
  swag = tmp_path / "swag" / "train.csv"
  swag.parent.mkdir()
  swag.write_text(lines[0] + "".join(lines[1:]) * 300)
  _concatenation_equals_single(
    tmp_path / "swag",
    "data_prep.multiple_choice",
    ["--input_file=%s" % swag, VOCAB, "--max_seq_length=32"],
    2,
  )


def test_num_output_shards_is_exactly_the_number_of_files(tmp_path):
  """As Beam's own sinks: N files, empty ones when there is less to cut."""
  from bert_tf.records.tfrecord_file import check_framing  # pylint: disable=g-import-not-at-top

  mrpc = [
    "--task_name=MRPC",
    "--data_dir=%s" % (FIXTURES / "glue" / "MRPC"),
    VOCAB,
    "--max_seq_length=32",
  ]
  single = tmp_path / "single.tf_record"
  _ok(_run("data_prep.classifier", *mrpc, "--output_file=%s" % single))
  beam = tmp_path / "mrpc" / "train.tf_record"
  _ok(
    _run(
      "data_prep.classifier",
      *mrpc,
      "--output_file=%s" % beam,
      "--runner=DirectRunner",
      "--num_output_shards=3",
    )
  )  # 1 chunk
  assert [p.name for p in _shards(beam)] == [
    "train.tf_record-%05d-of-00003" % i for i in range(3)
  ]
  assert b"".join(p.read_bytes() for p in _shards(beam)) == (
    single.read_bytes()
  )
  # Pre-training: 3 input files (3+ input shards) into 2 files, and one
  # small file (1 input shard) into 4.
  files = []
  for i in range(3):
    (tmp_path / ("in%d" % i)).mkdir()
    files.append(_corpus(tmp_path / ("in%d" % i), copies=1 + i))
  for inputs, n in [(",".join(map(str, files)), 2), (files[0], 4)]:
    prefix = tmp_path / ("pt%d" % n) / "pt.tfrecord"
    result = _run(
      "data_prep.create_pretraining_data",
      *PRETRAINING,
      "--input_file=%s" % inputs,
      "--output_file=%s" % prefix,
      "--runner=DirectRunner",
      "--num_output_shards=%d" % n,
    )
    _ok(result)
    shards = _shards(prefix)
    assert [p.name for p in shards] == [
      "pt.tfrecord-%05d-of-%05d" % (i, n) for i in range(n)
    ]
    counts = [check_framing(str(p)) for p in shards]
    assert all(problem is None for _, problem in counts)
    assert sum(count for count, _ in counts) > 0
    assert (" %d instances" % sum(count for count, _ in counts)) in (
      result.stderr
    )
