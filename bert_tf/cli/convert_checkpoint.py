"""Convert BERT checkpoints: original TF1 or HuggingFace in, either out.

    python -m bert_tf.convert_checkpoint \\
        --input=uncased_L-12_H-768_A-12/bert_model.ckpt \\
        --input_format=tf1 --output_dir=out
    python -m bert_tf.convert_checkpoint --input=all-MiniLM-L6-v2 \\
        --input_format=hf --output_dir=out
    python -m bert_tf.convert_checkpoint --input=out/bert_model.ckpt \\
        --output_format=hf --output_dir=out_hf
    python -m bert_tf.convert_checkpoint \\
        --input=bert_en_uncased_L-12_H-768_A-12 \\
        --input_format=tfhub --output_dir=out

With `--output_format=tf1` (default), `output_dir` receives
`bert_model.ckpt.{index,data-00000-of-00001}`, a `checkpoint` state file,
`bert_config.json`; with `--output_format=hf`, `model.safetensors` and
`config.json` in HuggingFace BERT layout (`bert_tf.checkpoints.hf_export`);
both get `vocab.txt` when the input folder has one (a TF Hub encoder: its
`vocab_file` asset, or its SentencePiece `sp_model_file` as `spiece.model`,
tf1 only; `bert_tf.checkpoints.tfhub_import`). The encoder and every
original head are kept; Adam slots / `global_step` are dropped. Files are
written to a temporary folder first and moved into `output_dir` at the end.
"""

from absl import flags

from bert_tf.io_utils import InputError
from bert_tf.runtime import app

# Loaded when the command runs: --help answers before TensorFlow loads.
conversion = app.lazy_import("bert_tf.modeling.conversion")

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


def main(argv):
  del argv
  if not FLAGS.input:
    raise InputError("--input is required")
  if not FLAGS.output_dir:
    raise InputError("--output_dir is required")
  conversion.convert(
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
