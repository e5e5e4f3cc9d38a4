"""HuggingFace export (`convert_checkpoint --output_format=hf`): name rules
inverse to the import's, and HF -> original -> HF round trips that give back
every tensor bit for bit and the config (tiny random model in CI, MiniLM
slow)."""

import json
import os

import numpy as np
import pytest
from safetensors.numpy import load_file

from bert_tf.checkpoints import hf_export
from bert_tf.checkpoints import hf_import
from bert_tf.modeling.conversion import convert
from tests.helpers.hf_models import EXPECTED_NAMES
from tests.helpers.hf_models import MINILM
from tests.helpers.hf_models import tiny_hf_model

# What the import drops: a buffer HF rebuilds, and the decoder HF ties to
# the word embeddings.
DROPPED = {
  "bert.embeddings.position_ids",
  "embeddings.position_ids",
  "cls.predictions.decoder.weight",
}
# HF bookkeeping keys no BERT config carries.
HF_ONLY_KEYS = {
  "_name_or_path",
  "gradient_checkpointing",
  "transformers_version",
  "use_cache",
  "pad_token_id",
}


def test_names_invert_the_import_rules():
  for hf_name, (tf1_name, transpose) in EXPECTED_NAMES.items():
    if tf1_name is None:
      continue
    prefix = (
      "bert."
      if hf_name.startswith(("bert.", "cls.", "qa_", "classifier"))
      else ""
    )
    assert hf_export.tf1_name_to_hf(tf1_name, prefix) == (hf_name, transpose)
    assert hf_import.hf_name_to_tf1(hf_name) == (tf1_name, transpose)


def _round_trip(source, tmp_path):
  """HF -> original TF1 -> HF; returns the last folder."""
  tf1_prefix = convert(str(source), "hf", str(tmp_path / "tf1"))
  return convert(tf1_prefix, "tf1", str(tmp_path / "hf"), output_format="hf")


def _check(source, out):
  """Same tensors (less what the import drops) and config; -> config."""
  original = load_file(os.path.join(source, "model.safetensors"))
  tensors = load_file(os.path.join(out, "model.safetensors"))
  assert set(tensors) == set(original) - DROPPED
  for name, value in tensors.items():
    assert value.dtype == original[name].dtype, name
    np.testing.assert_array_equal(value, original[name], err_msg=name)
  with open(os.path.join(source, "config.json")) as f:
    original_config = json.load(f)
  with open(os.path.join(out, "config.json")) as f:
    config = json.load(f)
  for key, value in original_config.items():
    if key not in HF_ONLY_KEYS:
      assert config[key] == value, key
  assert hf_import.read_hf_config(out) == hf_import.read_hf_config(source)
  return config


def test_tiny_model_round_trip(tmp_path):
  source = tmp_path / "source"
  tiny_hf_model(str(source))
  config = _check(str(source), _round_trip(source, tmp_path))
  # Every head: the classifier's HF class, with its label count.
  assert config["architectures"] == ["BertForSequenceClassification"]
  assert len(config["id2label"]) == 3
  assert (tmp_path / "hf" / "vocab.txt").read_text().startswith("tok0\n")


def test_encoder_only_names_have_no_prefix(tmp_path):
  source = tmp_path / "source"
  tensors = tiny_hf_model(str(source))
  keep = {n: v for n, v in tensors.items() if n.startswith("bert.")}
  from safetensors.numpy import save_file  # pylint: disable=g-import-not-at-top

  save_file(
    {n[len("bert.") :]: v for n, v in keep.items()},
    str(source / "model.safetensors"),
  )
  out = convert(str(source), "hf", str(tmp_path / "hf"), output_format="hf")
  written = load_file(os.path.join(out, "model.safetensors"))
  assert set(written) == {n[len("bert.") :] for n in keep} - DROPPED
  with open(os.path.join(out, "config.json")) as f:
    assert json.load(f)["architectures"] == ["BertModel"]


@pytest.mark.slow
@pytest.mark.skipif(not os.path.isdir(MINILM), reason="MiniLM not present")
def test_minilm_round_trip(tmp_path):
  config = _check(MINILM, _round_trip(MINILM, tmp_path))
  assert config["architectures"] == ["BertModel"]
