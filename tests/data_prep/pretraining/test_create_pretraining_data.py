"""create_pretraining_data vs the original's golden output, and its CLI."""

import gzip
import json
import random
import subprocess
import sys

import pytest

from bert_tf.records.tfrecord_file import crc32c_many
from bert_tf.tokenizers.tokenization import FullTokenizer
from data_prep.pretraining.documents import plan_shards
from data_prep.pretraining.documents import read_documents
from data_prep.pretraining.documents import Shard
from data_prep.pretraining.instances import create_training_instances
from data_prep.pretraining.instances import InstanceOptions
from data_prep.pretraining.instances import shuffle
from data_prep.pretraining.instances import truncate_pair_randomly
from tests.conftest import FIXTURES
from tests.conftest import REPO

GOLDEN = FIXTURES / "pretraining"
SAMPLE = str(GOLDEN / "sample_text.txt")
SETTINGS = {
  "instances": ([], InstanceOptions()),
  "instances_wwm": (
    ["--do_whole_word_mask", "--dupe_factor=5"],
    InstanceOptions(dupe_factor=5, do_whole_word_mask=True),
  ),
}
FIELDS = (
  "tokens",
  "segment_ids",
  "is_random_next",
  "masked_lm_positions",
  "masked_lm_labels",
)


@pytest.fixture(scope="module")
def tokenizer():
  return FullTokenizer(str(FIXTURES / "vocab_uncased.txt"), True)


def _golden(name):
  with gzip.open(GOLDEN / ("%s.jsonl.gz" % name), "rt") as f:
    return [json.loads(line) for line in f]


@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_instances_identical_to_original(tokenizer, name):
  documents = read_documents([Shard(SAMPLE)], tokenizer, progress=False)
  instances = create_training_instances(
    documents,
    list(tokenizer.vocab.keys()),
    SETTINGS[name][1],
    random.Random(12345),
  )
  golden = _golden(name)
  assert len(instances) == len(golden)
  for got, want in zip(instances, golden):
    assert [getattr(got, f) for f in FIELDS] == [want[f] for f in FIELDS]


def _cli(tmp_path, *flags):
  return subprocess.run(
    [
      sys.executable,
      "-m",
      "data_prep.create_pretraining_data",
      "--vocab_file=%s" % (FIXTURES / "vocab_uncased.txt"),
    ]
    + list(flags),
    cwd=REPO,
    capture_output=True,
    text=True,
    check=False,
  )


def _parse(paths):
  import tensorflow as tf  # pylint: disable=g-import-not-at-top

  records = []
  for path in paths:
    for raw in tf.data.TFRecordDataset(str(path)):
      example = tf.train.Example.FromString(raw.numpy())
      records.append(
        {
          k: list(v.int64_list.value)
          if v.HasField("int64_list")
          else list(v.float_list.value)
          for k, v in example.features.feature.items()
        }
      )
  return records


def _golden_records(tmp_path, name):
  path = tmp_path / ("%s.golden.tfrecord" % name)
  path.write_bytes(
    gzip.decompress((GOLDEN / ("%s.tfrecord.gz" % name)).read_bytes())
  )
  return _parse([path])


@pytest.mark.process
@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_cli_tfrecord_equals_original(tmp_path, name):
  out = tmp_path / "out.tfrecord"
  result = _cli(
    tmp_path,
    "--input_file=%s" % SAMPLE,
    "--output_file=%s" % out,
    *SETTINGS[name][0],
  )
  assert result.returncode == 0, result.stderr
  assert _parse([out]) == _golden_records(tmp_path, name)
  assert sorted(p.name for p in tmp_path.iterdir()) == [
    "%s.golden.tfrecord" % name,
    "out.tfrecord",
  ]  # no temp files left


@pytest.mark.process
def test_root_script_runs_the_original_command(tmp_path):
  """`python create_pretraining_data.py ...` as in the original README."""
  out = tmp_path / "out.tfrecord"
  result = subprocess.run(
    [
      sys.executable,
      "create_pretraining_data.py",
      "--input_file=%s" % SAMPLE,
      "--output_file=%s" % out,
      "--vocab_file=%s" % (FIXTURES / "vocab_uncased.txt"),
    ],
    cwd=REPO,
    capture_output=True,
    text=True,
    check=False,
  )
  assert result.returncode == 0, result.stderr
  assert _parse([out]) == _golden_records(tmp_path, "instances")


@pytest.mark.process
def test_cli_round_robin_and_comma_globs(tmp_path):
  outs = [tmp_path / ("part%d" % i) for i in range(3)]
  # A glob and a comma list: the same single input file, listed once.
  pattern = str(GOLDEN / "sample_t*.txt")
  result = _cli(
    tmp_path,
    "--input_file=%s" % pattern,
    "--output_file=%s" % ",".join(map(str, outs)),
  )
  assert result.returncode == 0, result.stderr
  golden = _golden_records(tmp_path, "instances")
  for i, out in enumerate(outs):
    assert _parse([out]) == golden[i::3]


def _bigger_corpus(tmp_path):
  """Ten copies of the sample text: 30 documents, blank-line separated."""
  text = (GOLDEN / "sample_text.txt").read_text(encoding="utf-8")
  path = tmp_path / "corpus.txt"
  path.write_text((text.rstrip("\n") + "\n\n") * 10, encoding="utf-8")
  return path


def _scalable(tmp_path, corpus, out_name, seed):
  out = tmp_path / out_name
  result = _cli(
    tmp_path,
    "--input_file=%s" % corpus,
    "--output_file=%s" % out,
    "--num_workers=2",
    "--dupe_factor=2",
    "--random_seed=%d" % seed,
  )
  assert result.returncode == 0, result.stderr
  files = sorted(tmp_path.glob(out_name + "-*"))
  return [p.name.replace(out_name, "") for p in files], [
    p.read_bytes() for p in files
  ]


@pytest.mark.process
def test_scalable_mode_is_deterministic_per_seed(tmp_path, tokenizer):
  corpus = _bigger_corpus(tmp_path)
  names, first = _scalable(tmp_path, corpus, "a", 7)
  assert names == ["-00000-of-00002", "-00001-of-00002"]  # a big file is cut
  assert _scalable(tmp_path, corpus, "b", 7)[1] == first
  assert _scalable(tmp_path, corpus, "c", 8)[1] != first
  records = _parse(sorted(tmp_path.glob("a-*")))
  mask_id = tokenizer.vocab["[MASK]"]
  for r in records:
    n = sum(r["input_mask"])
    k = int(sum(r["masked_lm_weights"]))
    assert len(r["input_ids"]) == 128 and len(r["masked_lm_ids"]) == 20
    assert r["input_ids"][0] == tokenizer.vocab["[CLS]"] and 0 < k <= 20
    assert r["masked_lm_positions"][:k] == sorted(
      set(r["masked_lm_positions"][:k])
    )
    assert max(r["masked_lm_positions"][:k]) < n - 1
  masked = [
    r["input_ids"][p] == mask_id
    for r in records
    for p, w in zip(r["masked_lm_positions"], r["masked_lm_weights"])
    if w
  ]
  assert 0.7 < sum(masked) / len(masked) < 0.9  # 80% [MASK]


def test_shards_keep_documents_whole(tmp_path, tokenizer):
  corpus = _bigger_corpus(tmp_path)
  shards = plan_shards([str(corpus)], max_shard_bytes=1 << 20, min_shards=4)
  assert len(shards) == 4
  assert shards[0].start == 0 and shards[-1].end == corpus.stat().st_size
  whole = read_documents([Shard(str(corpus))], tokenizer, progress=False)
  pieces = [
    d for s in shards for d in read_documents([s], tokenizer, progress=False)
  ]
  assert pieces == whole and len(whole) == 30


@pytest.mark.process
@pytest.mark.parametrize(
  "flags, message",
  [
    (["--input_file=/nonexistent/*.txt"], "--input_file: no file matches"),
    (["--vocab_file=/nonexistent/vocab.txt"], "--vocab_file=/nonexistent"),
    (["--max_predictions_per_seq=0"], "--max_predictions_per_seq=0: must be"),
    (["--max_seq_length=4"], "--max_seq_length=4 must be >= 5"),
    (["--masked_lm_prob=0"], "--masked_lm_prob=0.0 must be"),
    (
      ["--num_workers=2", "--output_file=/tmp/x,/tmp/y"],
      "--output_file: the scalable mode",
    ),
    (["--input_file={tmp}/empty.txt"], "empty.txt: no text"),
    (["--input_file={tmp}/empty.txt", "--num_workers=2"], "no text"),
  ],
)
def test_bad_input_is_one_line_error(tmp_path, flags, message):
  empty_dir = tmp_path / "in"
  empty_dir.mkdir()
  (empty_dir / "empty.txt").write_bytes(b"\n\n")
  out_dir = tmp_path / "out"
  defaults = [
    "--input_file=%s" % SAMPLE,
    "--output_file=%s" % (out_dir / "o.tfrecord"),
  ]
  flags = [f.replace("{tmp}", str(empty_dir)) for f in flags]
  result = _cli(tmp_path, *(defaults + flags))
  assert result.returncode == 1
  assert result.stderr.strip().splitlines() == [
    result.stderr.strip().splitlines()[-1]
  ]
  assert result.stderr.startswith("ERROR: ") and message in result.stderr
  assert not out_dir.exists() or not list(out_dir.iterdir())


def test_shuffle_draws_like_random_shuffle():
  for n in (0, 1, 2, 3, 7, 64, 65, 300):
    ours, theirs = random.Random(n), random.Random(n)
    a, b = list(range(n)), list(range(n))
    shuffle(a, ours)
    theirs.shuffle(b)
    assert a == b and ours.random() == theirs.random()


def _original_truncate(tokens_a, tokens_b, max_num_tokens, rng):
  """The original loop: delete the head or pop the tail of the longer list."""
  while len(tokens_a) + len(tokens_b) > max_num_tokens:
    trunc = tokens_a if len(tokens_a) > len(tokens_b) else tokens_b
    if rng.random() < 0.5:
      del trunc[0]
    else:
      trunc.pop()


def test_truncate_pair_randomly_matches_original_loop():
  sizes = random.Random(0)
  for seed in range(200):
    a = list(range(sizes.randint(1, 60)))
    b = list(range(100, 100 + sizes.randint(1, 60)))
    limit = sizes.randint(2, 70)
    ours = truncate_pair_randomly(a, b, limit, random.Random(seed))
    _original_truncate(a, b, limit, random.Random(seed))
    assert ours == (a, b)


def test_crc32c_known_values():
  # RFC 3720 B.4 / the usual check value of CRC-32C.
  assert list(crc32c_many([b"123456789", b"", bytes(32)])) == [
    0xE3069283,
    0x00000000,
    0x8A9136AA,
  ]


@pytest.mark.process
def test_cli_sentencepiece_vocabulary(tmp_path):
  import sentencepiece as spm  # pylint: disable=g-import-not-at-top

  spm.SentencePieceTrainer.train(
    input=SAMPLE,
    model_prefix=str(tmp_path / "m"),
    vocab_size=200,
    pad_id=0,
    unk_id=1,
    bos_id=-1,
    eos_id=-1,
    user_defined_symbols=["[CLS]", "[SEP]", "[MASK]"],
    num_threads=1,
    minloglevel=2,
  )
  out = tmp_path / "spm.tfrecord"
  # "--vocab_file=" unsets _cli's vocabulary: the model replaces it.
  result = _cli(
    tmp_path,
    "--input_file=%s" % SAMPLE,
    "--output_file=%s" % out,
    "--spm_model_file=%s" % (tmp_path / "m.model"),
    "--vocab_file=",
    "--dupe_factor=1",
  )
  assert result.returncode == 0, result.stderr
  records = _parse([out])
  assert records and all(r["input_ids"][0] == 2 for r in records)  # [CLS]
  assert max(i for r in records for i in r["input_ids"]) < 200
