"""python -m bert_tf.convert_checkpoint --input_format=tfhub: Model Garden's
TF Hub encoder of ckpt_a (shared golden set) and our own export give back
ckpt_a's variables exactly; other SavedModels are refused in one line."""

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.checkpoints import tfhub_import
from bert_tf.io_utils import InputError
from tests.conftest import REPO
from tests.export import standalone
from tests.helpers.checkpoints import convert_tfhub

GOLDEN = REPO.parent / "shared" / "golden"
CKPT_A = GOLDEN / "encoder" / "ckpt_a" / "bert_model.ckpt"
VOCAB = GOLDEN / "encoder" / "vocab_small.txt"


def _assert_same_as_ckpt_a(prefix, expected_names):
  original = tf.train.load_checkpoint(str(CKPT_A))
  converted = tf.train.load_checkpoint(str(prefix))
  names = sorted(converted.get_variable_to_shape_map())
  assert names == expected_names
  for name in names:
    np.testing.assert_array_equal(
      converted.get_tensor(name), original.get_tensor(name), err_msg=name
    )


def _ckpt_a_names(prefixes):
  return sorted(
    n
    for n in tf.train.load_checkpoint(str(CKPT_A)).get_variable_to_shape_map()
    if n.startswith(prefixes)
  )


@pytest.mark.process
def test_model_gardens_encoder_gives_back_ckpt_a(tmp_path):
  result = convert_tfhub(GOLDEN / "tfhub" / "encoder", tmp_path / "out")
  assert result.returncode == 0, result.stderr[-2000:]
  _assert_same_as_ckpt_a(
    tmp_path / "out" / "bert_model.ckpt", _ckpt_a_names(("bert/",))
  )
  assert (tmp_path / "out" / "vocab.txt").read_bytes() == VOCAB.read_bytes()
  config = (tmp_path / "out" / "bert_config.json").read_text()
  for key, value in (
    ("num_hidden_layers", 2),
    ("num_attention_heads", 4),
    ("intermediate_size", 128),
    ("vocab_size", 3000),
    ("max_position_embeddings", 64),
  ):
    assert '"%s": %d' % (key, value) in config


@pytest.mark.process
@pytest.mark.slow  # an export and a conversion: ~1 min
def test_round_trip_tf1_to_our_tfhub_and_back_is_exact(tmp_path):
  export_dir = standalone.export(
    tmp_path,
    "encoder",
    "--task=tfhub_encoder",
    "--checkpoint=%s" % CKPT_A,
    "--vocab_file=%s" % VOCAB,
    "--do_lower_case=True",
  )
  result = convert_tfhub(export_dir, tmp_path / "back")
  assert result.returncode == 0, result.stderr[-2000:]
  # The encoder and the masked-LM head (exported as `.mlm`).
  _assert_same_as_ckpt_a(
    tmp_path / "back" / "bert_model.ckpt",
    _ckpt_a_names(("bert/", "cls/predictions/")),
  )
  assert (
    (tmp_path / "back" / "bert_config.json")
    .read_text()
    .count('"initializer_range": 0.1')
  )  # ckpt_a's own config, not a guess


def _save_module(path, **variables):
  module = tf.Module()
  module.variables_list = [tf.Variable(v, name=n) for n, v in variables.items()]
  tf.saved_model.save(module, str(path))
  return path


@pytest.mark.process
def test_a_saved_model_that_is_no_bert_is_refused_in_one_line(tmp_path):
  model = _save_module(
    tmp_path / "dense", **{"dense/kernel": np.ones((2, 3), "f4")}
  )
  result = convert_tfhub(model, tmp_path / "out")
  assert result.returncode == 1
  assert result.stderr.strip().splitlines()[-1] == (
    "ERROR: --input=%s: not a BERT encoder SavedModel: no "
    "bert/embeddings/word_embeddings (23 of the 23 encoder variables "
    "missing); variables it has: dense/kernel" % model
  )
  assert not (tmp_path / "out" / "bert_model.ckpt.index").exists()


def test_a_folder_without_a_saved_model_is_refused(tmp_path):
  with pytest.raises(InputError, match="not a readable SavedModel"):
    tfhub_import.read_tfhub_encoder(str(tmp_path))


def test_an_encoder_missing_a_layer_variable_names_it(tmp_path):
  h, heads = 8, 2  # Model Garden's names, a 1-layer model's shapes
  names = {
    "word_embeddings/embeddings": (10, h),
    "position_embedding/embeddings": (4, h),
    "type_embeddings/embeddings": (2, h),
    "embeddings/layer_norm/gamma": (h,),
    "embeddings/layer_norm/beta": (h,),
    "pooler_transform/kernel": (h, h),
    "pooler_transform/bias": (h,),
  }
  for part in ("query", "key", "value"):
    names["transformer/layer_0/self_attention/%s/kernel" % part] = (
      h,
      heads,
      h // heads,
    )
    names["transformer/layer_0/self_attention/%s/bias" % part] = (
      heads,
      h // heads,
    )
  model = _save_module(
    tmp_path / "partial", **{n: np.zeros(s, "f4") for n, s in names.items()}
  )
  with pytest.raises(
    InputError,
    match=(
      "no bert/encoder/layer_0/attention/output/dense/kernel "
      r"\(10 of the 23 encoder variables missing\)"
    ),
  ):
    tfhub_import.read_tfhub_encoder(str(model))
