"""Whole-word dynamic masking (`DynamicMasking(..., whole_word_mask)`),
checked on the original's 118 instances of sample_text.txt re-masked many
times against the original's own word groups
(`data_prep.pretraining.instances._whole_word_groups`).

The 80/10/10 bound: each chosen piece is independently [MASK] with p = 0.8,
kept with p = 0.1 (plus 0.1/V for a random draw of itself, V = 30522) and
replaced otherwise. Over N pieces the observed share has standard deviation
sqrt(p(1-p)/N); the test allows 5 of them (a false failure once in ~1.7
million runs). The same bound is applied to the words of several pieces
whose pieces got different outcomes: per piece (the original's rule) a word
of k pieces is uniform with probability 0.8^k + 2 * 0.1^k, so their number
is a sum of independent Bernoullis with a known mean and variance.
"""

import gzip
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.tasks import pretraining as pretraining_task
from bert_tf.tasks.dynamic_masking import DynamicMasking
from bert_tf.tasks.dynamic_masking import unmasked_input_ids
from bert_tf.tokenizers import tokenization
from bert_tf.training import input_pipeline
from data_prep.pretraining.instances import _whole_word_groups
from tests.conftest import FIXTURES
from tests.conftest import REPO

_REPEATS = 20
_SIGMAS = 5


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
  path = tmp_path_factory.mktemp("golden") / "instances.tfrecord"
  path.write_bytes(
    gzip.decompress(
      (FIXTURES / "pretraining" / "instances.tfrecord.gz").read_bytes()
    )
  )
  specs = pretraining_task.feature_spec(128, 20)
  return next(iter(input_pipeline.eval_dataset([str(path)], specs, 1000)))


def _within(observed, expected_share, n):
  sigma = np.sqrt(expected_share * (1 - expected_share) / n)
  return abs(observed / n - expected_share) <= _SIGMAS * sigma


def test_whole_words_are_masked_as_units_with_the_80_10_10_rule(batch):
  vocab_file = str(FIXTURES / "vocab_uncased.txt")
  vocab = tokenization.load_vocab(vocab_file)
  inv = {i: t for t, i in vocab.items()}
  mask_id = vocab["[MASK]"]
  tf.random.set_seed(1)
  masking = DynamicMasking.from_vocab_file(vocab_file, 20, whole_word_mask=True)
  original = unmasked_input_ids(batch).numpy()
  lengths = batch["input_mask"].numpy().sum(-1)
  rows = [[inv[i] for i in original[r, :n]] for r, n in enumerate(lengths)]
  groups = [_whole_word_groups(tokens) for tokens in rows]
  assert sum(len(g) > 1 for row in groups for g in row) > 300
  pieces = masked_to_mask = kept = 0
  mixed, mixed_mean, mixed_var = 0, 0.0, 0.0
  previous = None
  for _ in range(_REPEATS):
    out = {k: v.numpy() for k, v in masking(batch).items()}
    assert previous is None or not np.array_equal(out["input_ids"], previous)
    previous = out["input_ids"]
    for r, (tokens, row_groups) in enumerate(zip(rows, groups)):
      count = int(out["masked_lm_weights"][r].sum())
      positions = out["masked_lm_positions"][r, :count]
      chosen = set(positions.tolist())
      budget = min(20, max(1, int(round(len(tokens) * 0.15))))
      assert list(positions) == sorted(chosen) and 1 <= count <= budget
      np.testing.assert_array_equal(out["masked_lm_weights"][r, count:], 0)
      np.testing.assert_array_equal(
        out["masked_lm_ids"][r, :count], original[r, positions]
      )
      for group in row_groups:
        inside = [p in chosen for p in group]
        assert all(inside) or not any(inside), (r, group, positions)
        # The walk skips only words that no longer fit.
        if not any(inside):
          assert len(group) > budget - count
      assert chosen <= {p for g in row_groups for p in g}
      untouched = np.setdiff1d(np.arange(128), positions)
      np.testing.assert_array_equal(
        out["input_ids"][r, untouched], original[r, untouched]
      )
      new = out["input_ids"][r, positions]
      pieces += count
      masked_to_mask += (new == mask_id).sum()
      kept += (new == original[r, positions]).sum()
      for group in row_groups:
        if len(group) > 1 and group[0] in chosen:
          outcome = [
            "mask"
            if out["input_ids"][r, p] == mask_id
            else "keep"
            if out["input_ids"][r, p] == original[r, p]
            else "random"
            for p in group
          ]
          uniform = 0.8 ** len(group) + 2 * 0.1 ** len(group)
          mixed += len(set(outcome)) > 1
          mixed_mean += 1 - uniform
          mixed_var += uniform * (1 - uniform)
  assert pieces > 20000
  assert _within(masked_to_mask, 0.8 + 0.1 / len(vocab), pieces)
  assert _within(kept, 0.1 + 0.1 / len(vocab), pieces)
  assert abs(mixed - mixed_mean) <= _SIGMAS * np.sqrt(mixed_var)
  # A per-word rule would give no mixed word; ~760 are expected (sd ~17).
  assert mixed_mean > 500


@pytest.mark.process
def test_whole_word_mask_without_dynamic_masking_is_refused(tmp_path):
  # Static masks come from create_pretraining_data: the flag would do nothing.
  result = subprocess.run(
    [
      sys.executable,
      "run_pretraining.py",
      "--input_file=x.tfrecord",
      "--bert_config_file=examples/bert_config_tiny.json",
      "--output_dir=%s" % (tmp_path / "out"),
      "--do_train",
      "--do_whole_word_mask",
    ],
    cwd=REPO,
    capture_output=True,
    text=True,
    timeout=120,
    check=False,
  )
  assert result.returncode == 1
  assert result.stderr.strip().splitlines()[-1] == (
    "ERROR: --do_whole_word_mask needs --dynamic_masking (static masks are "
    "made by create_pretraining_data)"
  )
  assert not (tmp_path / "out").exists()
