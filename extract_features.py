"""Extract fixed contextual embeddings from a pre-trained BERT (the original
`extract_features.py`: same flags, same JSON-lines output).

    python extract_features.py --input_file=input.txt \\
      --output_file=out.jsonl --vocab_file=$BERT_DIR/vocab.txt \\
      --bert_config_file=$BERT_DIR/bert_config.json \\
      --init_checkpoint=$BERT_DIR/bert_model.ckpt --layers=-1,-2,-3,-4

Input: one sentence per line, or "A ||| B" for a pair. Output: one JSON
object per input line (key `linex_index`, as the original spells it).
"""

import contextlib

from absl import flags
from absl import logging
import tqdm

from bert_tf.io_utils import atomic_output
from bert_tf.io_utils import InputError
from bert_tf.io_utils import require_file
from bert_tf.jobs import engine_flags
from bert_tf.modeling.bert_config import BertConfig
from bert_tf.runtime import app
from bert_tf.runtime import bert_flags
from bert_tf.runtime import flag_checks
from bert_tf.tokenizers import tokenization
from bert_tf.tokenizers.loading import load_tokenizer
from data_prep.extract_features.examples import convert_examples_to_features
from data_prep.extract_features.examples import read_examples

FLAGS = flags.FLAGS
# Loaded when the command runs: --help answers before TensorFlow loads.
distribution = app.lazy_import("bert_tf.training.distribution")
feature_extraction = app.lazy_import("bert_tf.tasks.feature_extraction")
pretrained = app.lazy_import("bert_tf.modeling.pretrained")


def define_flags():
  """The original extract_features.py flags, and ours."""
  flags.DEFINE_string(
    "input_file", None, "One sentence per line, or `A ||| B` for a pair."
  )
  flags.DEFINE_string("output_file", None, "JSON lines out.")
  flags.DEFINE_string(
    "layers", "-1,-2,-3,-4", "Comma-separated layer indexes (-1 is the last)."
  )
  bert_flags.define_model_flags()
  bert_flags.define_max_seq_length(128)
  bert_flags.define_tokenizer_flags()
  flags.DEFINE_integer("batch_size", 32, "Batch size for predictions.")
  flag_checks.positive("batch_size")
  flags.DEFINE_bool(
    "output_attentions",
    False,
    "Also write the attention probabilities of --layers (every head) to "
    "<output_file>.attentions.npz (python -m bert_tf.plot_attention draws "
    "them).",
  )
  engine_flags.define_dtype_flag()
  flags.DEFINE_bool("use_tpu", False, "Whether to use TPU or GPU/CPU.")
  flags.DEFINE_string(
    "master", None, "If using a TPU, the address of the master."
  )
  flags.DEFINE_integer(
    "num_tpu_cores",
    8,
    "Only used if `use_tpu` is True. Total number of TPU cores to use.",
  )
  flag_checks.positive("num_tpu_cores")
  flags.DEFINE_bool(
    "use_one_hot_embeddings",
    False,
    "If True, tf.one_hot will be used for embedding lookups, otherwise "
    "tf.nn.embedding_lookup will be used. On TPUs, this should be True "
    "since it is much faster.",
  )


def _parse_layers(text):
  try:
    return [int(x) for x in text.split(",")]
  except ValueError as e:
    raise InputError(
      "--layers=%s: expected comma-separated integers" % text
    ) from e


def main(argv):
  del argv
  for flag in ("input_file", "vocab_file", "bert_config_file"):
    require_file(getattr(FLAGS, flag), flag)
  if not FLAGS.output_file:
    raise InputError("--output_file is required")
  if not FLAGS.init_checkpoint:
    raise InputError("--init_checkpoint is required")
  # TPU flags are accepted for compatibility; the default device is used and
  # embedding lookups are gathers either way (same numbers).
  layer_indexes = _parse_layers(FLAGS.layers)
  config = BertConfig.from_json_file(FLAGS.bert_config_file)
  config.check_max_seq_length(FLAGS.max_seq_length)
  try:
    tokenization.validate_case_matches_checkpoint(
      FLAGS.do_lower_case, FLAGS.init_checkpoint
    )
  except ValueError as e:
    raise InputError(str(e)) from e
  tokenizer = load_tokenizer(FLAGS.vocab_file, FLAGS.do_lower_case)
  config.check_vocab(tokenizer.vocab, FLAGS.vocab_file)
  examples = read_examples(FLAGS.input_file)
  if not examples:
    raise InputError("--input_file=%s: no lines" % FLAGS.input_file)
  config.check_segments(
    any(e.text_b for e in examples), "--input_file=%s" % FLAGS.input_file
  )
  features = convert_examples_to_features(
    examples, FLAGS.max_seq_length, tokenizer
  )
  distribution.configure_runtime(dtype=FLAGS.dtype)
  encoder, _, _ = pretrained.load_tf1_model(config, FLAGS.init_checkpoint)
  extractor = feature_extraction.FeatureExtractor(
    encoder,
    layer_indexes,
    FLAGS.batch_size,
    output_attentions=FLAGS.output_attentions,
  )
  with contextlib.ExitStack() as stack:
    writer = stack.enter_context(atomic_output(FLAGS.output_file))
    attentions = (
      stack.enter_context(
        atomic_output(FLAGS.output_file + ".attentions.npz", "wb")
      )
      if (FLAGS.output_attentions)
      else None
    )
    for line in tqdm.tqdm(
      extractor.json_lines(features, attentions),
      total=len(features),
      unit="line",
      disable=None,
    ):
      writer.write(line)
  logging.info("wrote %d lines to %s", len(features), FLAGS.output_file)


def run():
  """Console-script entry point."""
  define_flags()
  app.run_app(main)


if __name__ == "__main__":
  run()
