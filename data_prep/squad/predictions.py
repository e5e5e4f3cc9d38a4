"""Re-scores saved SQuAD logits without the model: n-best predictions, null
odds (v2) and, when the predict file has answers, the official metrics.

Features are rebuilt from --predict_file with the same settings the model
saw; raw_results.jsonl holds one {"unique_id", "start_logits", "end_logits"}
per feature (as run_squad.py --do_predict saves it). Writes
predictions.json, nbest_predictions.json, null_odds.json (v2) and
eval_results.json (official key names). --use_best_threshold (v2) applies
the evaluation's best_f1_thresh and rewrites predictions.json, instead of a
second run by hand.

Usage:
  python -m data_prep.squad_predictions --predict_file=dev-v2.0.json \\
    --raw_results_file=out/raw_results.jsonl --vocab_file=vocab.txt \\
    --version_2_with_negative --use_best_threshold --output_dir=out
"""

from absl import flags
from absl import logging

from bert_tf.io_utils import InputError
from bert_tf.io_utils import require_file
from bert_tf.runtime import app
from bert_tf.runtime import bert_flags
from bert_tf.tokenizers.loading import load_tokenizer
from data_prep.squad import evaluation as squad_evaluation
from data_prep.squad import flags as squad_flags
from data_prep.squad import postprocess as squad_postprocess
from data_prep.squad import raw_results
from data_prep.squad.example import load_squad_json
from data_prep.squad.example import read_squad_examples
from data_prep.squad.features import convert_examples_to_features

FLAGS = flags.FLAGS


def define_flags():
  """Defines this command's flags (the original names and defaults)."""
  flags.DEFINE_string(
    "predict_file", None, "SQuAD json for predictions. E.g., dev-v1.1.json"
  )
  flags.DEFINE_string(
    "raw_results_file", None, "JSON lines: unique_id, start_logits, end_logits."
  )
  flags.DEFINE_string("output_dir", None, "Where the prediction files go.")
  flags.DEFINE_bool(
    "use_best_threshold",
    False,
    "v2 with answers: re-threshold with the evaluation's best_f1_thresh.",
  )
  bert_flags.define_tokenizer_flags()
  bert_flags.define_spm_model_file()
  bert_flags.define_max_seq_length(384)
  squad_flags.define_feature_flags()
  squad_flags.define_prediction_flags()


def _evaluate(dataset, predictions):
  return squad_evaluation.evaluate_predictions(
    dataset, predictions, FLAGS.version_2_with_negative
  )


def main(_):
  for name in ("predict_file", "raw_results_file"):
    require_file(getattr(FLAGS, name), name)
  tokenizer = load_tokenizer(
    FLAGS.vocab_file, FLAGS.do_lower_case, FLAGS.spm_model_file
  )
  if not FLAGS.output_dir:
    raise InputError("--output_dir is required")
  if FLAGS.use_best_threshold and not FLAGS.version_2_with_negative:
    raise InputError("--use_best_threshold needs --version_2_with_negative")
  examples = read_squad_examples(
    FLAGS.predict_file, False, FLAGS.version_2_with_negative
  )
  features = []
  convert_examples_to_features(
    examples,
    tokenizer,
    FLAGS.max_seq_length,
    FLAGS.doc_stride,
    FLAGS.max_query_length,
    False,
    features.append,
  )
  results = raw_results.read_raw_results(
    FLAGS.raw_results_file, FLAGS.max_seq_length
  )
  raw_results.check_raw_results(
    FLAGS.raw_results_file,
    results,
    {
      name: FLAGS[name].value
      for name in ("max_seq_length", "doc_stride", "max_query_length")
    },
    features,
  )
  predictions = squad_postprocess.compute_predictions(
    examples,
    features,
    results,
    FLAGS.n_best_size,
    FLAGS.max_answer_length,
    FLAGS.do_lower_case,
    FLAGS.version_2_with_negative,
    FLAGS.null_score_diff_threshold,
    bool(FLAGS.spm_model_file),
  )
  dataset = load_squad_json(FLAGS.predict_file)
  metrics = None
  if squad_evaluation.is_scorable(dataset, FLAGS.version_2_with_negative):
    metrics = _evaluate(dataset, predictions)
    if FLAGS.use_best_threshold:
      threshold = metrics["best_f1_thresh"]
      squad_postprocess.apply_threshold(predictions, threshold)
      metrics = _evaluate(dataset, predictions)
      metrics["null_score_diff_threshold"] = threshold
  elif FLAGS.use_best_threshold:
    raise InputError(
      "--use_best_threshold: %s has no answers to tune on" % FLAGS.predict_file
    )
  squad_postprocess.write_prediction_files(predictions, FLAGS.output_dir)
  if metrics is not None:
    squad_postprocess.write_eval_results(FLAGS.output_dir, metrics)
  logging.info(
    "%d predictions written to %s",
    len(predictions.predictions),
    FLAGS.output_dir,
  )


def run():
  """Console-script entry point."""
  define_flags()
  app.run_app(main)


if __name__ == "__main__":
  run()
