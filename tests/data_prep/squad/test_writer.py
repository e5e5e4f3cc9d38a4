"""write_squad_features' process pool: workers append their chunks in turn,
so any worker count, and spawned workers, give the single-process bytes; a
chunk that fails leaves no output and no process behind."""

import multiprocessing
import os

import pytest

from bert_tf.io_utils import InputError
from data_prep.squad import features as squad_features
from data_prep.squad import writer
from tests.helpers.pool_children import children_left
from tests.helpers.squad_golden import examples_and_features
from tests.helpers.squad_golden import FEATURE_SETTINGS
from tests.helpers.squad_golden import VOCAB

_SETTING = "features_v2_eval_128_64_32"


def _write(tmp_path, name, num_workers):
  _, is_training, _, seq, stride, query = FEATURE_SETTINGS[_SETTING]
  examples, _ = examples_and_features(_SETTING)
  out = tmp_path / name
  counts = writer.write_squad_features(
    examples,
    VOCAB,
    True,
    str(out),
    str(out) + ".features.jsonl",
    seq,
    stride,
    query,
    is_training,
    num_workers=num_workers,
  )
  return (
    counts,
    out.read_bytes(),
    (tmp_path / (name + ".features.jsonl")).read_bytes(),
  )


def test_any_worker_count_writes_the_single_process_bytes(tmp_path):
  one = _write(tmp_path, "one", 1)
  assert one[0].features > 3 * len(
    writer.chunk_bounds(examples_and_features(_SETTING)[0])
  )  # several chunks, several turns
  assert _write(tmp_path, "three", 3) == one


def test_spawned_workers_write_the_same_bytes(tmp_path, monkeypatch):
  one = _write(tmp_path, "one", 1)
  monkeypatch.setattr(
    multiprocessing, "get_all_start_methods", lambda: ["spawn"]
  )
  assert _write(tmp_path, "spawned", 2) == one


def test_a_failing_chunk_leaves_no_output_and_no_process(tmp_path, monkeypatch):
  encode = squad_features.FeatureEncoder.encode

  def encode_until_example_300(self, example, example_index):
    if example_index == 300:
      raise InputError("example 300 is bad")
    return encode(self, example, example_index)

  # Forked workers inherit the patch.
  monkeypatch.setattr(
    squad_features.FeatureEncoder, "encode", encode_until_example_300
  )
  with pytest.raises(InputError, match="example 300 is bad"):
    _write(tmp_path, "bad", 2)
  assert os.listdir(tmp_path) == []
  assert not children_left(30)
