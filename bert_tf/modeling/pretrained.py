"""An encoder plus the heads a checkpoint holds, loaded from it.

Original TF1 checkpoints and HuggingFace BERT folders both become
{original TF1 name: array}; the heads are found through the head registry
(`bert_tf.modeling.heads`), so a new head needs no change here.

Example:
    encoder, heads, report = load_tf1_model(config, "bert_model.ckpt")
    config, encoder, heads, report = load_hf_model("all-MiniLM-L6-v2")
    hf_lower_case("all-MiniLM-L6-v2")   # its tokenizer_config.json's
    save_tf1_checkpoint("out/bert_model.ckpt", tf1_name_map(encoder, **heads))
"""

import json
import os

from bert_tf.checkpoints import checkpoint_io
from bert_tf.checkpoints import hf_import
from bert_tf.modeling.bert_encoder import BertEncoder
from bert_tf.modeling.heads import heads_for_variables


def build_model_for_variables(config, shapes):
  """(encoder, {head key: head}) for the heads whose variables are in
  `shapes` (name -> shape, e.g. `checkpoint_shapes(prefix)`); pass both to
  `tf1_name_map(encoder, **heads)`."""
  encoder = BertEncoder(config)
  return encoder, heads_for_variables(config, shapes, encoder)


def load_tf1_model(config, ckpt_prefix):
  """Encoder + the heads a TF1 checkpoint holds, all loaded from it.

  Returns:
    (encoder, heads, report); see `build_model_for_variables`.
  """
  prefix = checkpoint_io.resolve_checkpoint(ckpt_prefix)
  shapes = checkpoint_io.checkpoint_shapes(prefix)
  config.check_arrays(shapes, prefix)  # before a model is built
  encoder, heads = build_model_for_variables(config, shapes)
  report = checkpoint_io.init_from_checkpoint(
    prefix, checkpoint_io.tf1_name_map(encoder, **heads)
  )
  checkpoint_io.require_encoder_loaded(report, prefix)
  return encoder, heads, report


def load_hf_model(model_dir):
  """Our encoder (+ heads found in the files) from an HF BERT folder.

  Returns:
    (config, encoder, heads, report); `report.checkpoint_only` also lists
    the HF names with no TF1 counterpart.
  """
  config = hf_import.read_hf_config(model_dir)
  arrays, unused = hf_import.read_hf_weights(model_dir)
  shapes = {name: value.shape for name, value in arrays.items()}
  config.check_arrays(shapes, model_dir)
  encoder, heads = build_model_for_variables(config, shapes)
  report = checkpoint_io.assign_arrays(
    checkpoint_io.tf1_name_map(encoder, **heads),
    shapes,
    arrays.__getitem__,
    model_dir,
  )
  checkpoint_io.require_encoder_loaded(report, model_dir)
  return (
    config,
    encoder,
    heads,
    report._replace(checkpoint_only=sorted(report.checkpoint_only + unused)),
  )


def hf_lower_case(model_dir):
  """do_lower_case of an HF folder's tokenizer_config.json, or None when
  it does not say (no file, not JSON, not a bool)."""
  path = os.path.join(model_dir, "tokenizer_config.json")
  try:
    with open(path, encoding="utf-8") as f:
      value = json.load(f).get("do_lower_case")
  except (OSError, ValueError, AttributeError, RecursionError):
    return None
  return value if isinstance(value, bool) else None
