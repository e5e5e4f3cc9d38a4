"""Converts a BERT checkpoint between the original TF1, HuggingFace and TF
Hub layouts (`python -m bert_tf.convert_checkpoint`, `fetch_model`, the API).

Here, not in `checkpoints/`, because converting builds the model
(`modeling.pretrained`) to name every weight as the original did.

Example:
    prefix = convert("all-MiniLM-L6-v2", "hf", "out/minilm")
    convert("out/minilm/bert_model.ckpt", "tf1", "out/hf", output_format="hf")
"""

import errno
import os
import re
import shutil
import tempfile

from absl import logging
from safetensors import SafetensorError
import tensorflow as tf

from bert_tf.checkpoints import checkpoint_io
from bert_tf.checkpoints import hf_export
from bert_tf.checkpoints import tfhub_import
from bert_tf.checkpoints.artefact import Artefact
from bert_tf.io_utils import first_line
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
  tfhub_import.SentencePieceFile.file_name,
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
    model = Artefact(input_path, "--input")
    config, encoder, heads, report = pretrained.load_hf_model(input_path)
  else:
    prefix = checkpoint_io.resolve_checkpoint(input_path)
    model = Artefact(os.path.dirname(prefix) or ".")
    # The checkpoint's own files: none may lead out of its folder.
    model.names(prefix=os.path.basename(prefix) + ".")
    if not bert_config_file:
      bert_config_file = model.file(
        "bert_config.json", required=False
      ) or model.shown("bert_config.json")
    require_file(bert_config_file, "bert_config_file")
    config = BertConfig.from_json_file(bert_config_file)
    encoder, heads, report = pretrained.load_tf1_model(config, prefix)
  dropped = [n for n in report.checkpoint_only if n.startswith("bert/")]
  if dropped:  # the output would silently lack them
    raise InputError(
      "--input=%s: %d encoder weights have no place in the model its "
      "config describes, e.g. %s (is it this model's config?)"
      % (input_path, len(dropped), dropped[0])
    )
  return (
    config,
    checkpoint_io.tf1_name_map(encoder, **heads),
    _vocab(config, model.file("vocab.txt", required=False)),
  )


def _vocab(config, vocab):
  """`vocab` (a real path inside the input, or None) if it fits the
  embedding table: a longer one would give ids past its rows."""
  if vocab:
    with open(vocab, "rb") as f:
      config.check_vocab(range(sum(1 for _ in f)), vocab)
  return vocab


def _load_tfhub(input_path, bert_config_file):
  """A TF Hub encoder's arrays under their original names (no model)."""
  if bert_config_file:
    raise InputError(
      "--bert_config_file is for --input_format=tf1; a TF Hub "
      "encoder's config comes from its variables"
    )
  config, arrays, vocab, _ = tfhub_import.read_tfhub_encoder(input_path)
  return (
    config,
    {n: tf.constant(a) for n, a in arrays.items()},
    # A SentencePiece model's pieces are checked on import.
    vocab
    if isinstance(vocab, tfhub_import.SentencePieceFile)
    else _vocab(config, vocab),
  )


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
  if output_format == "hf" and isinstance(
    vocab, tfhub_import.SentencePieceFile
  ):
    raise InputError(
      "--input=%s tokenizes with a SentencePiece model, which an HF BERT "
      "folder (vocab.txt) cannot hold: use --output_format=tf1" % input_path
    )
  os.makedirs(output_dir, exist_ok=True)
  tmp_dir = tempfile.mkdtemp(prefix=".convert-", dir=output_dir)
  try:
    _write(tmp_dir, output_format, config, name_map, vocab)
    # An earlier conversion's files go (its vocab.txt would pass for this
    # model's); the state file goes last: it is what readers look for.
    publish_dir(
      tmp_dir, output_dir, owned=_CONVERTED_FILES, last=("checkpoint",)
    )
  except (OSError, tf.errors.OpError, SafetensorError) as e:
    # Named by the user's folder, not the hidden one the set is built in.
    raise _write_error(e, output_dir) from e
  finally:
    shutil.rmtree(tmp_dir, ignore_errors=True)
  logging.info("wrote %d variables to %s", len(name_map), output_dir)
  if output_format == "hf":
    return output_dir
  return os.path.join(output_dir, _CKPT_NAME)


def _write(tmp_dir, output_format, config, name_map, vocab):
  if output_format == "hf":
    hf_export.write_hf_model(
      tmp_dir, config, {n: v.numpy() for n, v in name_map.items()}, vocab
    )
    return
  checkpoint_io.save_tf1_checkpoint(os.path.join(tmp_dir, _CKPT_NAME), name_map)
  with open(os.path.join(tmp_dir, "bert_config.json"), "w") as f:
    f.write(config.to_json_string())
  if vocab:
    name = getattr(vocab, "file_name", "vocab.txt")  # or spiece.model
    shutil.copyfile(vocab, os.path.join(tmp_dir, name))


def _write_error(e, output_dir):
  """A failed write as an OSError naming `output_dir`. TensorFlow and
  safetensors carry the system's reason inside their text."""
  if isinstance(e, OSError) and e.errno:
    return OSError(e.errno, e.strerror, output_dir)
  text = first_line(getattr(e, "message", None) or e)
  for code in (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES):
    if os.strerror(code) in text:
      return OSError(code, os.strerror(code), output_dir)
  return OSError(errno.EIO, re.split(r"[:;] ", text)[-1], output_dir)
