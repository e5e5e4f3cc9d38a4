"""Converts a BERT checkpoint between the original TF1, HuggingFace and TF
Hub layouts (`python -m bert_tf.convert_checkpoint`, `fetch_model`, the API).

Here, not in `checkpoints/`, because converting builds the model
(`modeling.pretrained`) to name every weight as the original did.

Example:
    prefix = convert("all-MiniLM-L6-v2", "hf", "out/minilm")
    convert("out/minilm/bert_model.ckpt", "tf1", "out/hf", output_format="hf")
"""

import os
import shutil
import tempfile

from absl import logging
import tensorflow as tf

from bert_tf.checkpoints import checkpoint_io
from bert_tf.checkpoints import hf_export
from bert_tf.checkpoints import tfhub_import
from bert_tf.io_utils import InputError
from bert_tf.io_utils import publish_dir
from bert_tf.io_utils import require_file
from bert_tf.modeling import pretrained
from bert_tf.modeling.bert_config import BertConfig

_CKPT_NAME = "bert_model.ckpt"
# What a conversion (either format) writes into --output_dir.
_CONVERTED_FILES = (
  _CKPT_NAME + ".*",
  "checkpoint",
  "bert_config.json",
  "vocab.txt",
  "model.safetensors",
  "config.json",
)


def _load(input_path, input_format, bert_config_file):
  """Returns (config, name_map, vocab path or None)."""
  if input_format == "tfhub":
    return _load_tfhub(input_path, bert_config_file)
  if input_format == "hf":
    if bert_config_file:
      raise InputError(
        "--bert_config_file is for --input_format=tf1; an HF "
        "folder carries its own config.json"
      )
    if not os.path.isdir(input_path):
      raise InputError("--input=%s: not an HF model folder" % input_path)
    config, encoder, heads, _ = pretrained.load_hf_model(input_path)
    folder = input_path
  else:
    prefix = checkpoint_io.resolve_checkpoint(input_path)
    folder = os.path.dirname(prefix)
    config_file = bert_config_file or os.path.join(folder, "bert_config.json")
    require_file(config_file, "bert_config_file")
    config = BertConfig.from_json_file(config_file)
    encoder, heads, _ = pretrained.load_tf1_model(config, prefix)
  vocab = os.path.join(folder, "vocab.txt")
  return (
    config,
    checkpoint_io.tf1_name_map(encoder, **heads),
    vocab if os.path.isfile(vocab) else None,
  )


def _load_tfhub(input_path, bert_config_file):
  """A TF Hub encoder's arrays under their original names (no model)."""
  if bert_config_file:
    raise InputError(
      "--bert_config_file is for --input_format=tf1; a TF Hub "
      "encoder's config comes from its variables"
    )
  if not os.path.isdir(input_path):
    raise InputError("--input=%s: not a SavedModel folder" % input_path)
  config, arrays, vocab, _ = tfhub_import.read_tfhub_encoder(input_path)
  return config, {n: tf.constant(a) for n, a in arrays.items()}, vocab


def convert(
  input_path,
  input_format,
  output_dir,
  bert_config_file=None,
  output_format="tf1",
):
  """Writes the converted model into `output_dir`; returns the TF1 prefix
  (tf1) or `output_dir` (hf)."""
  config, name_map, vocab = _load(input_path, input_format, bert_config_file)
  os.makedirs(output_dir, exist_ok=True)
  tmp_dir = tempfile.mkdtemp(prefix=".convert-", dir=output_dir)
  try:
    if output_format == "hf":
      hf_export.write_hf_model(
        tmp_dir, config, {n: v.numpy() for n, v in name_map.items()}, vocab
      )
    else:
      checkpoint_io.save_tf1_checkpoint(
        os.path.join(tmp_dir, _CKPT_NAME), name_map
      )
      with open(os.path.join(tmp_dir, "bert_config.json"), "w") as f:
        f.write(config.to_json_string())
      if vocab:
        shutil.copyfile(vocab, os.path.join(tmp_dir, "vocab.txt"))
    # An earlier conversion's files go (its vocab.txt would pass for this
    # model's); the state file goes last: it is what readers look for.
    publish_dir(
      tmp_dir, output_dir, owned=_CONVERTED_FILES, last=("checkpoint",)
    )
  finally:
    shutil.rmtree(tmp_dir, ignore_errors=True)
  logging.info("wrote %d variables to %s", len(name_map), output_dir)
  if output_format == "hf":
    return output_dir
  return os.path.join(output_dir, _CKPT_NAME)
