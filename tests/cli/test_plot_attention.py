"""Attention maps: the encoder's probabilities against a numpy restatement,
extract_features.py --output_attentions (.npz beside the JSON lines) and
python -m bert_tf.plot_attention from a checkpoint or the .npz: the PNG
grid, the page, the before/after heat map and CSV, and its refusals."""

import csv
import json
import os
import subprocess
import sys
import types

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.attention import divergence
from bert_tf.attention import figures
from bert_tf.cli import attention_sources
from bert_tf.io_utils import InputError
from bert_tf.modeling import pretrained
from tests import conftest
from tests.helpers.attention import frozen_below_layer_1
from tests.helpers.attention import PAIR_TOKENS
from tests.helpers.attention import softmax_maps
from tests.helpers.attention import write_npz
from tests.helpers.checkpoints import ckpt_prefix
from tests.helpers.checkpoints import config_of
from tests.helpers.checkpoints import ENCODER_DIR
from tests.helpers.checkpoints import golden_inputs
from tests.helpers.cli import assert_one_error
from tests.helpers.cli import run_cases

VOCAB = str(ENCODER_DIR / "vocab_small.txt")
CONFIG = str(ENCODER_DIR / "ckpt_a" / "bert_config.json")
CKPT_A = ckpt_prefix("ckpt_a")


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


def _flags(**changes):
  """The flags attention_sources.from_checkpoints reads."""
  values = dict(
    bert_config_file=CONFIG,
    vocab_file=VOCAB,
    do_lower_case=True,
    max_seq_length=16,
    input_file=None,
    text="The cat sat.",
    text_b="It was long",
  )
  values.update(changes)
  return types.SimpleNamespace(**values)


def test_plot_from_a_checkpoint_draws_the_encoders_attention(encoder):
  (maps,) = attention_sources.from_checkpoints(
    _flags(), [ckpt_prefix("ckpt_a")], [0, -1]
  )
  assert maps.layers == [0, 1]  # -1 named by its number
  (example,) = maps.examples
  assert example.tokens == [
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
  assert example.segments == [0] * 8 + [1] * 4
  ids = {
    "input_ids": tf.constant(
      [[101, 1996, 1039, 2050, 2102, 2938, 1012, 102, 2009, 2001, 2146, 102]]
    ),
    "segment_ids": tf.constant([[0] * 8 + [1] * 4]),
  }
  expected = encoder(ids, output_attentions=True)["attentions"]
  np.testing.assert_allclose(example.attentions[0], expected[0][0], atol=1e-6)
  np.testing.assert_allclose(example.attentions[1], expected[1][0], atol=1e-6)
  figure = figures.grid(
    example.tokens, example.attentions, ["0", "1"], heads=[0, 3]
  )
  assert [a.get_title() for a in figure.axes if a.get_title()] == [
    "layer 0, head 0",
    "layer 0, head 3",
    "layer 1, head 0",
    "layer 1, head 3",
  ]
  with pytest.raises(InputError, match="--layers: 2 is out of range"):
    attention_sources.from_checkpoints(_flags(), [CKPT_A], [2])


def _npz_pair(folder):
  """Two .npz of the same 2 lines, layers [0, -1] x 3 heads: the second's
  layer 0 is the first's, its last layer differs."""
  before = softmax_maps(PAIR_TOKENS, [0, -1], 3, inputs=2)
  after = softmax_maps(PAIR_TOKENS, [0, -1], 3, inputs=2, seed=7)
  for a, b in zip(before.examples, after.examples):
    b.attentions[0] = a.attentions[0]
  return (
    write_npz(folder / "before.npz", before),
    write_npz(folder / "after.npz", after),
    divergence.head_divergence(before, after),
  )


@pytest.mark.process  # one program runs every case
def test_pages_heat_maps_and_refusals_on_the_command_line(tmp_path):
  a, b, per_input = _npz_pair(tmp_path)
  frozen = frozen_below_layer_1(tmp_path)
  out = tmp_path / "out"
  hostile = softmax_maps(PAIR_TOKENS, [0, -1], 3)
  bad = hostile.examples[0].attentions.copy()
  bad[1, 2, 3, 4] = np.nan
  damaged = {
    "fewer layers than named": {"line_0_attentions": bad[:1]},
    "wrong rank": {"line_0_attentions": bad[0]},
    "NaN": {"line_0_attentions": bad},
    "above 1": {"line_0_attentions": np.where(np.isnan(bad), 3.0, bad)},
    "pickled": {"line_0_tokens": np.array(PAIR_TOKENS, dtype=object)},
  }
  paths = {
    name: write_npz(
      tmp_path / ("%s.npz" % name.replace(" ", "_")), hostile, **x
    )
    for name, x in damaged.items()
  }
  model = [
    "--init_checkpoint=%s" % CKPT_A,
    "--bert_config_file=%s" % CONFIG,
    "--vocab_file=%s" % VOCAB,
    "--text=The cat sat.",
    "--text_b=It was long",
    "--max_seq_length=16",
  ]
  page_path, csv_path = out / "ab.html", out / "ab.csv"
  good = [
    [
      "--attentions_file=" + a,
      "--compare_attentions_file=" + b,
      "--output_file=%s" % page_path,
      "--divergence_file=%s" % csv_path,
    ],
    ["--attentions_file=" + a, "--line=1", "--output_file=%s/a1.png" % out],
    model
    + [
      "--compare_checkpoint=" + frozen,
      "--output_file=%s/frozen.png" % out,
      "--divergence_file=%s/frozen.csv" % out,
    ],
  ]
  refused = [
    (["--attentions_file=" + p, "--output_file=%s/x.html" % out], [p])
    for p in paths.values()
  ] + [
    (["--attentions_file=" + a, "--output_file=" + a], ["same file as"]),
    (
      [
        "--attentions_file=" + a,
        "--compare_attentions_file=" + b,
        "--output_file=%s/x.png" % out,
        "--divergence_file=" + b,
      ],
      ["--divergence_file=" + b, "--compare_attentions_file"],
    ),
    (
      model
      + [
        "--compare_checkpoint=" + frozen,
        "--output_file=%s.index" % frozen,
      ],
      ["is part of --compare_checkpoint"],
    ),
    (
      ["--attentions_file=" + a, "--init_checkpoint=" + CKPT_A],
      ["--attentions_file and --init_checkpoint"],
    ),
    (
      ["--attentions_file=" + a, "--heads=1", "--output_file=%s/x.html" % out],
      ["--heads"],
    ),
    (
      ["--attentions_file=" + a, "--divergence_file=%s/x.csv" % out],
      ["--divergence_file needs a second model"],
    ),
    (["--attentions_file=" + a, "--text=x"], ["--text does not apply"]),
    (model + ["--line=1"], ["--line does not apply"]),
    (
      [
        "--attentions_file=" + a,
        "--compare_attentions_file=" + paths["pickled"],
      ],
      ["--compare_attentions_file=" + paths["pickled"], "allow_pickle"],
    ),
  ]
  refused = [
    (
      argv
      + ["--output_file=%s/x.png" % out]
      * (not any(x.startswith("--output_file") for x in argv)),
      says,
    )
    for argv, says in refused
  ]
  before = open(a, "rb").read()
  outcomes = run_cases(
    [("bert_tf.plot_attention", argv) for argv in good]
    + [("bert_tf.plot_attention", argv) for argv, _ in refused]
  )
  for outcome in outcomes[: len(good)]:
    assert outcome[0] == 0, outcome[1][-2000:]
  for outcome, (argv, says) in zip(outcomes[len(good) :], refused):
    assert_one_error(outcome, *says, name=argv)
  assert open(a, "rb").read() == before
  assert sorted(os.listdir(out)) == [
    "a1.png",
    "ab.csv",
    "ab.html",
    "frozen.csv",
    "frozen.png",
  ]
  # The CSV: layer 0 unchanged (exactly 0), the last layer as computed.
  rows = list(csv.DictReader(open(csv_path)))
  assert [(r["layer"], r["head"]) for r in rows] == [
    (layer, str(h)) for layer in ("0", "last") for h in range(3)
  ]
  assert [float(r["js_divergence_mean"]) for r in rows[:3]] == [0.0] * 3
  np.testing.assert_allclose(
    [float(r["js_divergence_mean"]) for r in rows[3:]],
    per_input.mean(0)[1],
    rtol=1e-5,
  )
  assert "<script" in page_path.read_text()
  frozen_rows = list(csv.DictReader(open(out / "frozen.csv")))
  assert [float(r["js_divergence_max"]) for r in frozen_rows[:4]] == [0.0] * 4
  assert all(float(r["js_divergence_mean"]) > 0 for r in frozen_rows[4:])
  for png in ("a1.png", "frozen.png"):
    assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


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
  page = tmp_path / "lines.html"
  result = _run(
    [
      "-m",
      "bert_tf.plot_attention",
      "--attentions_file=%s.attentions.npz" % out,
      "--output_file=%s" % page,
    ]
  )
  assert result.returncode == 0, result.stderr[-2000:]
  assert '"name":"line 0"' in page.read_text()
  assert '"name":"line 1"' in page.read_text()
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
