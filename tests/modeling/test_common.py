"""Shared helpers for the model tests (golden encoder fixtures) + smoke tests."""

import pathlib

import numpy as np

from bert_tf.modeling import pretrained
from bert_tf.checkpoints import checkpoint_io
from bert_tf.modeling.bert_config import BertConfig
from tests import conftest

ENCODER_DIR = conftest.FIXTURES / "encoder"


def ckpt_prefix(name):
  return str(ENCODER_DIR / name / "bert_model.ckpt")


def load_golden(name):
  """(config, encoder, heads, report) for fixture checkpoint `ckpt_a`/`ckpt_b`."""
  config = BertConfig.from_json_file(str(ENCODER_DIR / name /
                                         "bert_config.json"))
  encoder, heads, report = pretrained.load_tf1_model(config,
                                                        ckpt_prefix(name))
  return config, encoder, heads, report


def golden_inputs():
  return dict(np.load(ENCODER_DIR / "inputs.npz"))


def variables_tsv(name):
  """Name -> shape list from the original's variables.tsv."""
  rows = (ENCODER_DIR / name / "variables.tsv").read_text().splitlines()
  shapes = {}
  for row in rows:
    var, shape = row.split("\t")
    shapes[var] = [int(d) for d in shape.strip("[]").split(",") if d.strip()]
  return shapes


def test_variables_tsv_parses():
  shapes = variables_tsv("ckpt_a")
  assert len(shapes) == 50
  assert shapes["cls/squad/output_weights"] == [2, 64]
