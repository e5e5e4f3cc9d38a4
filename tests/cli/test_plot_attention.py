"""Attention maps: the encoder's probabilities against a numpy restatement,
extract_features.py --output_attentions (.npz beside the JSON lines) and
python -m bert_tf.plot_attention (PNG grid) from a checkpoint or the .npz."""

import json
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.cli import plot_attention
from bert_tf.io_utils import InputError
from bert_tf.modeling import pretrained
from tests import conftest
from tests.helpers.checkpoints import ckpt_prefix
from tests.helpers.checkpoints import config_of
from tests.helpers.checkpoints import ENCODER_DIR
from tests.helpers.checkpoints import golden_inputs

VOCAB = str(ENCODER_DIR / "vocab_small.txt")
CONFIG = str(ENCODER_DIR / "ckpt_a" / "bert_config.json")


@pytest.fixture(scope="module")
def encoder():
  return pretrained.load_tf1_model(config_of("ckpt_a"), ckpt_prefix("ckpt_a"))[
    0
  ]


def _layer_0_probs(encoder, inputs):
  """Layer 0's attention softmax restated in numpy from the weights."""
  x = encoder(inputs, training=False)["embedding_output"].numpy()
  names = {n: v.numpy() for n, v in encoder.tf1_variables().items()}
  prefix = "bert/encoder/layer_0/attention/self/"
  heads = encoder.config.num_attention_heads
  size = x.shape[-1] // heads

  def project(name):
    y = x @ names[prefix + name + "/kernel"] + names[prefix + name + "/bias"]
    return y.reshape(x.shape[0], x.shape[1], heads, size).transpose(0, 2, 1, 3)

  scores = project("query") @ project("key").transpose(0, 1, 3, 2)
  scores = (
    scores / np.sqrt(size)
    + (1.0 - inputs["input_mask"][:, None, None, :]) * -10000.0
  )
  scores = np.exp(scores - scores.max(-1, keepdims=True))
  return scores / scores.sum(-1, keepdims=True)


def test_attention_probabilities_are_the_softmax_the_layer_uses(encoder):
  inputs = {k: tf.constant(v) for k, v in golden_inputs().items()}
  plain = encoder(inputs, training=False)
  outputs = encoder(inputs, training=False, output_attentions=True)
  assert "attentions" not in plain
  np.testing.assert_array_equal(
    plain["sequence_output"], outputs["sequence_output"]
  )
  attentions = [a.numpy() for a in outputs["attentions"]]
  assert len(attentions) == 2 and attentions[0].shape == (3, 4, 24, 24)
  np.testing.assert_allclose(
    attentions[0], _layer_0_probs(encoder, golden_inputs()), atol=1e-5
  )
  np.testing.assert_allclose(attentions[1].sum(-1), 1.0, atol=1e-5)


def test_plot_from_a_checkpoint_draws_the_encoders_attention(encoder, tmp_path):
  tokens, attentions = plot_attention.text_attentions(
    encoder, VOCAB, True, ["The cat sat.", "It was long"], 16, [0, -1]
  )
  assert tokens == [
    "[CLS]",
    "the",
    "c",
    "##a",
    "##t",
    "sat",
    ".",
    "[SEP]",
    "it",
    "was",
    "long",
    "[SEP]",
  ]
  ids = {
    "input_ids": tf.constant(
      [[101, 1996, 1039, 2050, 2102, 2938, 1012, 102, 2009, 2001, 2146, 102]]
    ),
    "segment_ids": tf.constant([[0] * 8 + [1] * 4]),
  }
  expected = encoder(ids, output_attentions=True)["attentions"]
  np.testing.assert_allclose(attentions[0], expected[0][0], atol=1e-6)
  np.testing.assert_allclose(attentions[1], expected[1][0], atol=1e-6)
  figure = plot_attention.draw(tokens, attentions, [0, -1], heads=[0, 3])
  axes = figure.axes[:-1]  # the last one is the colour bar
  assert [a.get_title() for a in axes] == [
    "layer 0, head 0",
    "layer 0, head 3",
    "layer -1, head 0",
    "layer -1, head 3",
  ]
  assert [t.get_text() for t in axes[0].get_xticklabels()] == tokens
  with pytest.raises(InputError, match="--heads: 4 is out of range"):
    plot_attention.draw(tokens, attentions, [0, -1], heads=[4])


def _run(args, cwd=conftest.REPO):
  return subprocess.run(
    [sys.executable] + args,
    cwd=cwd,
    capture_output=True,
    text=True,
    timeout=300,
    check=False,
  )


@pytest.mark.process
@pytest.mark.slow  # two programs: ~40 s on a busy machine
def test_extract_features_npz_then_plot_attention(tmp_path):
  (tmp_path / "in.txt").write_text("the world was long\nit sat ||| on it\n")
  out = tmp_path / "out.jsonl"
  common = [
    "extract_features.py",
    "--input_file=%s" % (tmp_path / "in.txt"),
    "--vocab_file=%s" % VOCAB,
    "--bert_config_file=%s" % CONFIG,
    "--init_checkpoint=%s" % ckpt_prefix("ckpt_a"),
    "--layers=-1,0",
    "--max_seq_length=12",
  ]
  result = _run(common + ["--output_file=%s" % out, "--output_attentions"])
  assert result.returncode == 0, result.stderr[-2000:]
  plain = _run(common + ["--output_file=%s" % (tmp_path / "plain.jsonl")])
  assert plain.returncode == 0, plain.stderr[-2000:]
  assert out.read_text() == (tmp_path / "plain.jsonl").read_text()
  assert not (tmp_path / "plain.jsonl.attentions.npz").exists()
  lines = [json.loads(line) for line in out.read_text().splitlines()]
  with np.load(str(out) + ".attentions.npz") as data:
    assert list(data["layers"]) == [-1, 0]
    for line in lines:
      tokens = [t["token"] for t in line["features"]]
      name = "line_%d_" % line["linex_index"]
      assert list(data[name + "tokens"]) == tokens
      attentions = data[name + "attentions"]
      assert attentions.shape == (2, 4, len(tokens), len(tokens))
      np.testing.assert_allclose(attentions.sum(-1), 1.0, atol=1e-5)
  png = tmp_path / "line1.png"
  result = _run(
    [
      "-m",
      "bert_tf.plot_attention",
      "--attentions_file=%s.attentions.npz" % out,
      "--line=1",
      "--layers=0",
      "--output_file=%s" % png,
    ]
  )
  assert result.returncode == 0, result.stderr[-2000:]
  assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
  result = _run(
    [
      "-m",
      "bert_tf.plot_attention",
      "--attentions_file=%s.attentions.npz" % out,
      "--line=7",
      "--output_file=%s" % png,
    ]
  )
  assert result.returncode == 1
  assert (
    result.stderr.strip()
    .splitlines()[-1]
    .startswith("ERROR: --attentions_file=%s.attentions.npz: no line 7" % out)
  )
