"""The README pre-training demo path end to end (examples/pretraining_demo.sh:
sample_text.txt -> create_pretraining_data -> run_pretraining.py --do_train
--do_eval) at CI scale, plus run_pretraining's one-line input errors (records
of other length flags; records --dynamic_masking cannot re-mask)."""

import collections
import gzip
import json
import math
import os
import subprocess
import sys

import pytest

from bert_tf.records import task_schemas
from bert_tf.records import tfrecord_file
from bert_tf.tasks import pretraining as pretraining_task
from bert_tf.tokenizers import tokenization
from bert_tf.training import input_pipeline
from tests.conftest import FIXTURES
from tests.conftest import REPO
from tests.helpers.cli import assert_one_error
from tests.helpers.cli import run_cases

pytestmark = pytest.mark.process  # starts programs

EXAMPLES = REPO / "examples"
SPECIAL = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


def _sample_vocab(path):
  """The shipped vocab cut to the pieces of sample_text.txt (same
  WordPiece output: every longest match is kept), for a fast output layer."""
  vocab_file = str(EXAMPLES / "data" / "vocab.txt")
  tokenizer = tokenization.FullTokenizer(vocab_file, True)
  with open(EXAMPLES / "data" / "sample_text.txt", encoding="utf-8") as f:
    used = set(tokenizer.tokenize(f.read())) | set(SPECIAL)
  with open(vocab_file, encoding="utf-8") as f:
    kept = [line for line in f if line.strip() in used]
  path.write_text("".join(kept), encoding="utf-8")
  return len(kept)


def _eval_results(path):
  pairs = [line.split(" = ") for line in path.read_text().splitlines()]
  return [key for key, _ in pairs], {k: float(v) for k, v in pairs}


def _unigram_accuracy(record_file):
  """Accuracy of always predicting the most frequent masked token."""
  specs = pretraining_task.feature_spec(128, 20)
  counts = collections.Counter()
  for batch in input_pipeline.eval_dataset([record_file], specs, 1000):
    weights = batch["masked_lm_weights"].numpy() > 0
    counts.update(batch["masked_lm_ids"].numpy()[weights].tolist())
  return counts.most_common(1)[0][1] / sum(counts.values())


def test_demo_path_overfits(tmp_path):
  vocab = tmp_path / "vocab.txt"
  config = tmp_path / "bert_config.json"
  config.write_text(
    json.dumps(
      {
        "vocab_size": _sample_vocab(vocab),
        "hidden_size": 64,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
        "intermediate_size": 256,
        "max_position_embeddings": 128,
        "type_vocab_size": 2,
      }
    )
  )
  out = tmp_path / "out"
  env = dict(
    os.environ,
    TF_CPP_MIN_LOG_LEVEL="2",
    PYTHON=sys.executable,
    OUTPUT_DIR=str(out),
    VOCAB_FILE=str(vocab),
    BERT_CONFIG_FILE=str(config),
  )
  result = subprocess.run(
    [
      "bash",
      str(EXAMPLES / "pretraining_demo.sh"),
      "--num_train_steps=80",
      "--learning_rate=3e-3",
      "--max_eval_steps=10",
      "--seed=1",
      "--noprogress",
    ],
    env=env,
    capture_output=True,
    text=True,
    timeout=300,
    check=False,
  )
  assert result.returncode == 0, result.stderr[-3000:]
  keys, results = _eval_results(out / "eval_results.txt")
  assert keys == [
    "global_step",
    "loss",
    "masked_lm_accuracy",
    "masked_lm_loss",
    "next_sentence_accuracy",
    "next_sentence_loss",
  ]
  assert results["global_step"] == 80
  assert (out / "ckpt-80.index").exists()
  # loss = masked_lm_loss + next_sentence_loss (both means over 10 batches).
  assert math.isfinite(results["loss"])
  assert results["loss"] > results["masked_lm_loss"]
  # A random model is at ~1/V; the best constant guess is the unigram rate.
  baseline = _unigram_accuracy(str(out / "tf_examples.tfrecord"))
  assert baseline < 0.1
  assert results["masked_lm_accuracy"] > baseline + 0.4, results


def _run_pretraining(tmp_path, *flags):
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
  return subprocess.run(
    [
      sys.executable,
      "run_pretraining.py",
      "--output_dir=%s" % tmp_path,
      "--bert_config_file=%s" % (EXAMPLES / "bert_config_tiny.json"),
    ]
    + list(flags),
    cwd=REPO,
    env=env,
    capture_output=True,
    text=True,
    timeout=120,
    check=False,
  )


def test_records_must_match_length_flags(tmp_path):
  record = tmp_path / "golden.tfrecord"  # max_seq_length 128, 20 predictions
  record.write_bytes(
    gzip.decompress(
      (FIXTURES / "pretraining" / "instances.tfrecord.gz").read_bytes()
    )
  )
  result = _run_pretraining(
    tmp_path,
    "--do_eval",
    "--input_file=%s" % record,
    "--max_predictions_per_seq=10",
  )
  assert result.returncode == 1
  last = result.stderr.strip().splitlines()[-1]
  assert last == (
    "ERROR: --input_file %s: record 0 has 20 values of masked_lm_positions, "
    "the flags expect 10 (--max_seq_length / --max_predictions_per_seq "
    "must match data generation)" % record
  ), last
  assert "Traceback" not in result.stderr


def _masking_case(tmp_path, name, records, vocab_size=26):
  """run_pretraining --dynamic_masking --do_whole_word_mask argv over
  good.tfrecord and `records` ((input_ids, masked_lm_positions,
  masked_lm_ids): 16 positions, one prediction weighted) written to `name`,
  for a model of `vocab_size`."""
  schema = task_schemas.pretraining_schema(16, 4)
  path = tmp_path / name
  tfrecord_file.write_tfrecord_file(
    str(path),
    [
      schema.encode(
        {
          "input_ids": ids + [0] * (16 - len(ids)),
          "input_mask": [1] * len(ids) + [0] * (16 - len(ids)),
          "segment_ids": [0] * 16,
          "masked_lm_positions": positions,
          "masked_lm_ids": labels,
          "masked_lm_weights": [1.0, 0.0, 0.0, 0.0],
          "next_sentence_labels": [0],
        }
      )
      for ids, positions, labels in records
    ],
  )
  vocab = tmp_path / "vocab.txt"  # 26 ids; "##s" makes whole words
  pieces = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "##s"]
  vocab.write_text("\n".join(pieces + ["w%d" % i for i in range(20)]) + "\n")
  config = tmp_path / ("bert_config_%d.json" % vocab_size)
  config.write_text(
    json.dumps(
      {
        "vocab_size": vocab_size,
        "hidden_size": 16,
        "num_hidden_layers": 1,
        "num_attention_heads": 2,
        "intermediate_size": 32,
        "max_position_embeddings": 16,
      }
    )
  )
  return [
    "--input_file=%s,%s" % (tmp_path / "good.tfrecord", path),
    "--vocab_file=%s" % vocab,
    "--bert_config_file=%s" % config,
    "--output_dir=%s" % (tmp_path / ("out_" + name)),
    "--do_train",
    "--dynamic_masking",
    "--do_whole_word_mask",
    "--max_seq_length=16",
    "--max_predictions_per_seq=4",
    "--train_batch_size=16",
    "--num_train_steps=10",
    "--num_warmup_steps=0",
    "--noprogress",
  ]


@pytest.mark.slow  # six runs
def test_dynamic_masking_names_the_record_it_cannot_use(tmp_path):
  # [CLS] w w##s [MASK] w [SEP]: position 4 was masked (label id 9).
  good = ([2, 6, 7, 5, 4, 8, 3], [4, 0, 0, 0], [9, 0, 0, 0])
  # Only record 2 of each file is bad (1 in 8 of the records read: 10
  # batches of 16 meet it); weight-0 positions are never read.
  cases = {
    "position.tfrecord": ([2, 6, 7, 4, 3], [30, 0, 0, 0], [9, 0, 0, 0]),
    "past_tokens.tfrecord": ([2, 6, 7, 4, 3], [5, 0, 0, 0], [9, 0, 0, 0]),
    "label.tfrecord": ([2, 6, 7, 4, 3], [3, 0, 0, 0], [700, 0, 0, 0]),
    "token.tfrecord": ([2, 6, 77, 4, 3], [3, 0, 0, 0], [9, 0, 0, 0]),
  }
  _masking_case(tmp_path, "good.tfrecord", [good] * 4)
  argvs = [
    _masking_case(tmp_path, name, [good, good, bad, good])
    for name, bad in cases.items()
  ]
  # A vocabulary of more ids than the model's embeddings: its random
  # replacement tokens would fail the embedding lookup.
  argvs.append(_masking_case(tmp_path, "good.tfrecord", [good] * 4, 20))
  outcomes = run_cases([("run_pretraining", a) for a in argvs])
  says = [
    "masked_lm_positions holds 30, outside the 5 tokens of the record",
    "masked_lm_positions holds 5, outside the 5 tokens of the record",
    "masked_lm_ids holds 700, outside the 26 ids of the vocabulary",
    "input_ids holds 77, outside the 26 ids of the vocabulary",
  ]
  for name, message, outcome in zip(cases, says, outcomes):
    assert assert_one_error(outcome) == (
      "ERROR: --input_file %s: record 2: %s" % (tmp_path / name, message)
    )
  assert assert_one_error(outcomes[-1]) == (
    "ERROR: --vocab_file=%s: 26 tokens, more than the model's vocab_size "
    "20 (is it the model's vocabulary?)" % (tmp_path / "vocab.txt")
  )
  # The same run over good records only trains.
  argv = _masking_case(tmp_path, "good.tfrecord", [good] * 4)
  argv[0] = "--input_file=%s" % (tmp_path / "good.tfrecord")
  ((code, stderr),) = run_cases([("run_pretraining", argv)])
  assert code == 0, stderr[-2000:]
  assert (tmp_path / "out_good.tfrecord" / "ckpt-10.index").exists()
