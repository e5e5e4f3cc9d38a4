"""Extract fixed contextual embeddings from a pre-trained BERT (the original
`extract_features.py`: same flags, same JSON-lines output).

    python extract_features.py --input_file=input.txt \\
      --output_file=out.jsonl --vocab_file=$BERT_DIR/vocab.txt \\
      --bert_config_file=$BERT_DIR/bert_config.json \\
      --init_checkpoint=$BERT_DIR/bert_model.ckpt --layers=-1,-2,-3,-4

Input: one sentence per line, or "A ||| B" for a pair. Output: one JSON
object per input line (key `linex_index`, as the original spells it).
"""

from absl import flags

from bert_tf.jobs import engine_flags
from bert_tf.jobs import extract_features as extract_features_job
from bert_tf.runtime import app
from bert_tf.runtime import bert_flags
from bert_tf.runtime import flag_checks
from bert_tf.runtime import flag_needs

FLAGS = flags.FLAGS


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
  # Accepted, as the original's command lines pass them.
  for name in ("use_tpu", "master", "num_tpu_cores"):
    flag_needs.ignored(name, "features are computed on the default device")
  flag_needs.ignored(
    "use_one_hot_embeddings", "embedding lookups are gathers: same numbers"
  )


def main(_):
  extract_features_job.FeatureExtractionJob(
    extract_features_job.FeatureExtractionConfig.from_flags(FLAGS)
  ).run()


def run():
  """Console-script entry point."""
  define_flags()
  app.run_app(main)


if __name__ == "__main__":
  run()
