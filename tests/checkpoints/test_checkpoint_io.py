"""TF1 checkpoint round trip, original names/shapes, one-line errors."""

import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.checkpoints import checkpoint_io
from bert_tf.io_utils import InputError
from bert_tf.modeling import pretrained
from bert_tf.modeling.bert_config import BertConfig
from bert_tf.modeling.conversion import convert
from tests import conftest
from tests.helpers.checkpoints import ckpt_prefix
from tests.helpers.checkpoints import ENCODER_DIR
from tests.helpers.checkpoints import load_golden
from tests.helpers.checkpoints import variables_tsv

REPO = str(conftest.REPO)


def _written_shapes(prefix):
  return {n: list(s) for n, s in tf.train.list_variables(prefix)}


@pytest.mark.parametrize("name", ["ckpt_a", "ckpt_b"])
def test_round_trip_is_bit_identical(tmp_path, name):
  config, encoder, heads, _ = load_golden(name)
  name_map = checkpoint_io.tf1_name_map(encoder, **heads)
  prefix = checkpoint_io.save_tf1_checkpoint(
    str(tmp_path / "bert_model.ckpt"), name_map
  )
  expected = {
    n: s
    for n, s in variables_tsv(name).items()
    if not checkpoint_io.is_optimizer_state(n)
  }
  assert _written_shapes(prefix) == expected
  assert (tmp_path / "checkpoint").read_text() == (
    ENCODER_DIR / name / "checkpoint"
  ).read_text()
  original = tf.train.load_checkpoint(ckpt_prefix(name))
  encoder2, heads2, report = pretrained.load_tf1_model(config, str(tmp_path))
  reloaded = checkpoint_io.tf1_name_map(encoder2, **heads2)
  assert sorted(report.loaded) == sorted(expected)
  for n in expected:
    np.testing.assert_array_equal(reloaded[n].numpy(), original.get_tensor(n))


def test_global_step_is_written(tmp_path):
  _, encoder, _, _ = load_golden("ckpt_b")
  prefix = checkpoint_io.save_tf1_checkpoint(
    str(tmp_path / "m.ckpt"), checkpoint_io.tf1_name_map(encoder), global_step=7
  )
  reader = tf.train.load_checkpoint(prefix)
  assert reader.get_tensor("global_step") == 7
  assert reader.get_variable_to_dtype_map()["global_step"] == tf.int64


def test_shape_mismatch_is_one_line_before_a_model_is_built():
  config = BertConfig.from_json_file(
    str(ENCODER_DIR / "ckpt_a" / "bert_config.json")
  )
  with pytest.raises(InputError) as e:
    pretrained.load_tf1_model(config, ckpt_prefix("ckpt_b"))
  # ckpt_b: vocab 3000, H=32; ckpt_a's config: H=64.
  assert str(e.value) == (
    "%s: bert/embeddings/word_embeddings is [3000, 32], but the config "
    "makes it [3000, 64] (is it this model's config?)" % ckpt_prefix("ckpt_b")
  )


def test_missing_checkpoint_and_missing_encoder_variables(tmp_path):
  with pytest.raises(InputError, match="nowhere/bert_model.ckpt"):
    checkpoint_io.resolve_checkpoint(
      str(tmp_path / "nowhere" / "bert_model.ckpt")
    )
  config = BertConfig.from_json_file(
    str(ENCODER_DIR / "ckpt_b" / "bert_config.json")
  )
  config.num_hidden_layers = 2  # ckpt_b has one layer.
  with pytest.raises(
    InputError,
    match="1 encoder layers, but the config's num_hidden_layers is 2",
  ):
    pretrained.load_tf1_model(config, ckpt_prefix("ckpt_b"))


def test_missing_heads_keep_initialisers():
  config, encoder, heads, _ = load_golden("ckpt_b")
  extra = pretrained.build_model_for_variables(
    config, {"cls/seq_relationship/output_weights": [2, 32]}
  )[1]
  report = checkpoint_io.init_from_checkpoint(
    ckpt_prefix("ckpt_b"), checkpoint_io.tf1_name_map(encoder, **heads, **extra)
  )
  assert report.not_in_checkpoint == [
    "cls/seq_relationship/output_bias",
    "cls/seq_relationship/output_weights",
  ]


def test_convert_tf1_drops_optimizer_state(tmp_path):
  out = tmp_path / "out"
  prefix = convert(ckpt_prefix("ckpt_b"), "tf1", str(out))
  expected = {
    n: s
    for n, s in variables_tsv("ckpt_b").items()
    if not checkpoint_io.is_optimizer_state(n)
  }
  assert _written_shapes(prefix) == expected
  assert sorted(os.listdir(out)) == [
    "bert_config.json",
    "bert_model.ckpt.data-00000-of-00001",
    "bert_model.ckpt.index",
    "checkpoint",
  ]
  assert BertConfig.from_json_file(
    str(out / "bert_config.json")
  ) == BertConfig.from_json_file(
    str(ENCODER_DIR / "ckpt_b" / "bert_config.json")
  )


@pytest.mark.process
def test_convert_cli_bad_config_exits_with_one_line(tmp_path):
  result = subprocess.run(
    [
      sys.executable,
      "-m",
      "bert_tf.convert_checkpoint",
      "--input=" + ckpt_prefix("ckpt_b"),
      "--input_format=tf1",
      "--output_dir=" + str(tmp_path / "out"),
      "--bert_config_file=" + str(ENCODER_DIR / "ckpt_a" / "bert_config.json"),
    ],
    cwd=REPO,
    capture_output=True,
    text=True,
    check=False,
  )
  assert result.returncode == 1
  last = result.stderr.strip().splitlines()[-1]
  assert last.startswith("ERROR: ") and "[3000, 32]" in last
  assert "[3000, 64]" in last
  assert not (tmp_path / "out").exists()


def test_tf1_saver_restores_what_we_write(tmp_path):
  """The original code restores with a TF1 Saver / init_from_checkpoint."""
  _, encoder, heads, _ = load_golden("ckpt_a")
  name_map = checkpoint_io.tf1_name_map(encoder, **heads)
  prefix = checkpoint_io.save_tf1_checkpoint(
    str(tmp_path / "bert_model.ckpt"), name_map
  )
  graph = tf.Graph()
  with graph.as_default():
    tf1_vars = [
      tf.compat.v1.get_variable(n, shape=v.shape, dtype=tf.float32)
      for n, v in sorted(name_map.items())
    ]
    saver = tf.compat.v1.train.Saver(tf1_vars)
    with tf.compat.v1.Session(graph=graph) as sess:
      saver.restore(sess, prefix)
      values = sess.run(tf1_vars)
  for (n, v), value in zip(sorted(name_map.items()), values):
    np.testing.assert_array_equal(value, v.numpy(), err_msg=n)


def test_variables_tsv_parses():
  shapes = variables_tsv("ckpt_a")
  assert len(shapes) == 50
  assert shapes["cls/squad/output_weights"] == [2, 64]
