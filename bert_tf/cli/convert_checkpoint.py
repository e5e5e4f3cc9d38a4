"""Convert BERT checkpoints: original TF1 or HuggingFace in, either out.

    python -m bert_tf.convert_checkpoint --input=uncased_L-12_H-768_A-12/bert_model.ckpt \\
        --input_format=tf1 --output_dir=out
    python -m bert_tf.convert_checkpoint --input=all-MiniLM-L6-v2 \\
        --input_format=hf --output_dir=out
    python -m bert_tf.convert_checkpoint --input=out/bert_model.ckpt \\
        --output_format=hf --output_dir=out_hf
    python -m bert_tf.convert_checkpoint --input=bert_en_uncased_L-12_H-768_A-12 \\
        --input_format=tfhub --output_dir=out

With `--output_format=tf1` (default), `output_dir` receives
`bert_model.ckpt.{index,data-00000-of-00001}`, a `checkpoint` state file,
`bert_config.json`; with `--output_format=hf`, `model.safetensors` and
`config.json` in HuggingFace BERT layout (`bert_tf.checkpoints.hf_export`);
both get `vocab.txt` when the input folder has one (a TF Hub encoder: its
`vocab_file` asset; `bert_tf.checkpoints.tfhub_import`). The encoder and every
original head are kept; Adam slots / `global_step` are dropped. Files are
written to a temporary folder first and moved into `output_dir` at the end.
"""

import os
import shutil
import tempfile

from absl import flags
from absl import logging

from bert_tf.cli import app
from bert_tf.io_utils import InputError
from bert_tf.io_utils import publish_dir
from bert_tf.io_utils import require_file
from bert_tf.modeling.bert_config import BertConfig

# Loaded when the command runs: --help answers before TensorFlow loads.
checkpoint_io = app.lazy_import("bert_tf.checkpoints.checkpoint_io")
hf_export = app.lazy_import("bert_tf.checkpoints.hf_export")
pretrained = app.lazy_import("bert_tf.modeling.pretrained")
tf = app.lazy_import("tensorflow")
tfhub_import = app.lazy_import("bert_tf.checkpoints.tfhub_import")

FLAGS = flags.FLAGS


def define_flags():
  """Defines this command's flags (the original names and defaults)."""
  flags.DEFINE_string(
    "input",
    None,
    "TF1 checkpoint prefix (e.g. .../bert_model.ckpt) or an HF model folder.",
  )
  flags.DEFINE_enum(
    "input_format",
    "tf1",
    ["tf1", "hf", "tfhub"],
    "Format of --input (tfhub: a TF Hub BERT encoder SavedModel folder).",
  )
  flags.DEFINE_enum(
    "output_format", "tf1", ["tf1", "hf"], "Format written to --output_dir."
  )
  flags.DEFINE_string("output_dir", None, "Folder for the converted model.")
  flags.DEFINE_string(
    "bert_config_file",
    None,
    "tf1 only: config of the checkpoint (default: "
    "bert_config.json next to --input).",
  )


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


def main(argv):
  del argv
  if not FLAGS.input:
    raise InputError("--input is required")
  if not FLAGS.output_dir:
    raise InputError("--output_dir is required")
  convert(
    FLAGS.input,
    FLAGS.input_format,
    FLAGS.output_dir,
    FLAGS.bert_config_file,
    FLAGS.output_format,
  )


def run():
  """Console-script entry point."""
  define_flags()
  app.run_app(main)


if __name__ == "__main__":
  run()
