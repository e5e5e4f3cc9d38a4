"""The original run_squad.py flags that every SQuAD CLI shares.

run_squad.py, data_prep/squad/__main__.py (featurization) and
data_prep/squad/predictions.py (re-scoring saved logits) must agree on these
settings, so they are defined here once, with the original's names, help
texts and defaults.

Example:
    squad_flags.define_feature_flags()     # at module level, next to the
    squad_flags.define_prediction_flags()  # CLI's own flags
"""

from absl import flags

from bert_tf.runtime import flag_checks


def define_feature_flags():
  """--doc_stride, --max_query_length and --version_2_with_negative."""
  flags.DEFINE_integer(
    "doc_stride",
    128,
    "When splitting up a long document into chunks, how much stride to "
    "take between chunks.",
  )
  flag_checks.positive("doc_stride")
  flags.DEFINE_integer(
    "max_query_length",
    64,
    "The maximum number of tokens for the question. Questions longer than "
    "this will be truncated to this length.",
  )
  flag_checks.positive("max_query_length")
  flags.DEFINE_bool(
    "version_2_with_negative",
    False,
    "If true, the SQuAD examples contain some that do not have an answer.",
  )


def define_prediction_flags():
  """--n_best_size, --max_answer_length and --null_score_diff_threshold."""
  flags.DEFINE_integer(
    "n_best_size",
    20,
    "The total number of n-best predictions to generate in the "
    "nbest_predictions.json output file.",
  )
  flag_checks.positive("n_best_size")
  flags.DEFINE_integer(
    "max_answer_length",
    30,
    "The maximum length of an answer that can be generated. This is needed "
    "because the start and end predictions are not conditioned on one "
    "another.",
  )
  flag_checks.positive("max_answer_length")
  flags.DEFINE_float(
    "null_score_diff_threshold",
    0.0,
    "If null_score - best_non_null is greater than the threshold predict null.",
  )
  flag_checks.finite("null_score_diff_threshold")
