"""The tiny original-format checkpoints the tests run on.

`tests/fixtures/encoder/ckpt_a` (2 layers, H=64, every original head) and
`ckpt_b` (1 layer, H=32, encoder only) were written by the original BERT code;
`inputs.npz` holds a batch and `variables.tsv` each checkpoint's names and
shapes. `with_heads` adds a task model's random heads to one of them (the
conftest fixture `head_checkpoint` makes each such checkpoint once per
session).

Example:
    config, encoder, heads, report = load_golden("ckpt_a")
    model = ClassifierModel(config_of("ckpt_b"), 2)
    prefix = with_heads(tmp_path, "ckpt_b", model)
"""

import json

import numpy as np

from bert_tf.checkpoints import checkpoint_io
from bert_tf.modeling import pretrained
from bert_tf.modeling.bert_config import BertConfig
from tests.conftest import FIXTURES
from tests.helpers import processes

ENCODER_DIR = FIXTURES / "encoder"
# ckpt_b's 3000-token vocabulary and prefix, and its config as a dict.
VOCAB = str(ENCODER_DIR / "vocab_small.txt")
CKPT = str(ENCODER_DIR / "ckpt_b" / "bert_model.ckpt")
TINY_CONFIG = {
  "attention_probs_dropout_prob": 0.1,
  "hidden_act": "relu",
  "hidden_dropout_prob": 0.1,
  "hidden_size": 32,
  "initializer_range": 0.1,
  "intermediate_size": 64,
  "max_position_embeddings": 512,
  "num_attention_heads": 2,
  "num_hidden_layers": 1,
  "type_vocab_size": 2,
  "vocab_size": 3000,
}


def ckpt_prefix(name):
  """The TF1 prefix of fixture checkpoint `name` ("ckpt_a" / "ckpt_b")."""
  return str(ENCODER_DIR / name / "bert_model.ckpt")


def config_file(name):
  return str(ENCODER_DIR / name / "bert_config.json")


def config_of(name):
  return BertConfig.from_json_file(config_file(name))


def load_golden(name):
  """(config, encoder, heads, report) for fixture checkpoint `name`."""
  config = config_of(name)
  encoder, heads, report = pretrained.load_tf1_model(config, ckpt_prefix(name))
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


def write_config(path, **changes):
  """TINY_CONFIG with `changes` as a bert_config.json; returns its path."""
  path.write_text(json.dumps(dict(TINY_CONFIG, **changes)))
  return str(path)


def with_heads(folder, base, model):
  """Fixture checkpoint `base`'s encoder + `model`'s (random) heads, loaded
  into `model` and saved as an original checkpoint in `folder`; its prefix."""
  checkpoint_io.init_from_checkpoint(ckpt_prefix(base), model.tf1_variables())
  return checkpoint_io.save_tf1_checkpoint(
    str(folder / "bert_model.ckpt"), model.tf1_variables()
  )


def convert_tfhub(input_dir, output_dir, *flags):
  """`convert_checkpoint --input_format=tfhub` (its CompletedProcess)."""
  return processes.run(
    [
      "-m",
      "bert_tf.convert_checkpoint",
      "--input=%s" % input_dir,
      "--input_format=tfhub",
      "--output_dir=%s" % output_dir,
    ]
    + list(flags)
  )
