"""Shared SQuAD test data: the golden inputs (unzipped once) and settings.

Golden files come from the original run_squad.py (tests/fixtures/squad/
README.md). The raw logits are regenerated exactly as the golden README
describes: RandomState(1), per feature float32(3*N(0,1)) start then end.
"""

import functools
import gzip
import json
import pathlib
import tempfile

import numpy as np

from bert_tf.tokenizers import tokenization
from data_prep.squad.example import read_squad_examples
from data_prep.squad.features import convert_examples_to_features
from data_prep.squad.raw_results import RawResult
from tests import conftest

REPO = conftest.REPO
SQUAD = REPO / "tests" / "fixtures" / "squad"
VOCAB = str(conftest.FIXTURES / "vocab_uncased.txt")

# golden feature file -> (input, is_training, v2, seq, stride, query)
FEATURE_SETTINGS = {
  "features_v1_eval_384_128_64": ("small_v1", False, False, 384, 128, 64),
  "features_v1_train_128_64_32": (
    "small_v1_first_answer",
    True,
    False,
    128,
    64,
    32,
  ),
  "features_v2_train_384_128_64": (
    "small_v2_first_answer",
    True,
    True,
    384,
    128,
    64,
  ),
  "features_v2_eval_128_64_32": ("small_v2", False, True, 128, 64, 32),
}

_TMP = pathlib.Path(tempfile.mkdtemp(prefix="squad_golden_"))


@functools.lru_cache(maxsize=None)
def input_path(name):
  """The golden input `name` (e.g. "small_v1") as a plain JSON file."""
  path = _TMP / (name + ".json")
  path.write_bytes(gzip.open(SQUAD / (name + ".json.gz")).read())
  return str(path)


@functools.lru_cache(maxsize=None)
def tokenizer():
  return tokenization.FullTokenizer(VOCAB, do_lower_case=True)


@functools.lru_cache(maxsize=None)
def examples_and_features(setting):
  name, is_training, v2, seq, stride, query = FEATURE_SETTINGS[setting]
  examples = read_squad_examples(input_path(name), is_training, v2)
  features = []
  convert_examples_to_features(
    examples, tokenizer(), seq, stride, query, is_training, features.append
  )
  return examples, features


def golden_jsonl(name):
  with gzip.open(SQUAD / name, "rt", encoding="ascii") as f:
    return [json.loads(line) for line in f]


def golden_bytes(relative):
  return gzip.open(SQUAD / relative).read()


def random_results(features, seq_length, boost=0.0):
  rng = np.random.RandomState(1)
  results = []
  for feature in features:
    start = [
      float(x) for x in (3 * rng.standard_normal(seq_length)).astype(np.float32)
    ]
    end = [
      float(x) for x in (3 * rng.standard_normal(seq_length)).astype(np.float32)
    ]
    if boost:
      start[0] += boost
      end[0] += boost
    results.append(RawResult(feature.unique_id, start, end))
  return results
