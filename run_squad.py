r"""BERT fine-tuning and prediction for SQuAD 1.1 and 2.0.

The original run_squad.py on the Keras 3 engine: same flags, defaults and
output files, and original checkpoints load as they are.

    python run_squad.py --vocab_file=$BERT_DIR/vocab.txt \
      --bert_config_file=$BERT_DIR/bert_config.json \
      --init_checkpoint=$BERT_DIR/bert_model.ckpt --do_train=True \
      --train_file=$SQUAD_DIR/train-v1.1.json --do_predict=True \
      --predict_file=$SQUAD_DIR/dev-v1.1.json --train_batch_size=12 \
      --learning_rate=3e-5 --num_train_epochs=2.0 --max_seq_length=384 \
      --doc_stride=128 --output_dir=/tmp/squad_base/

--do_train writes train.tf_record (examples pre-shuffled with
random.Random(12345)) and trains int(questions / train_batch_size *
num_train_epochs) steps; re-running the same command resumes from the latest
checkpoint in --output_dir. --do_predict writes eval.tf_record (+ its
.features.jsonl sidecar), raw_results.jsonl (the logits, see
data_prep/squad/predictions.py to re-score them), predictions.json,
nbest_predictions.json, null_odds.json (v2) and, when --predict_file has
answers, eval_results.json with the official metrics (v2: also best_exact /
best_f1 and their thresholds, computed from null_odds). With a multi-worker
TF_CONFIG every worker featurizes and predicts, and only the chief writes the
prediction files. --verbose_logging is accepted for compatibility; questions
skipped for an answer not found in the context are counted in one warning.

New: --spm_model_file (a SentencePiece model instead of --vocab_file);
--eval_every_steps / --eval_every_epochs score --predict_file during
training with the same post-processing and official evaluation as
--do_predict (eval_history.jsonl, TensorBoard in output_dir/eval/), with
--best_metric (e.g. f1), --early_stopping_patience and
--predict_checkpoint=best (bert_tf/jobs/eval_flags.py).
"""

import random

from absl import flags
from absl import logging
import tqdm

from bert_tf.io_utils import InputError
from bert_tf.io_utils import output_set
from bert_tf.io_utils import require_file
from bert_tf.jobs import finetune
from bert_tf.runtime import app
from bert_tf.runtime import flag_checks
from data_prep.squad import evaluation as squad_evaluation
from data_prep.squad import flags as squad_flags
from data_prep.squad import postprocess as squad_postprocess
from data_prep.squad.example import load_squad_json
from data_prep.squad.example import read_squad_examples
from data_prep.squad.features import check_feature_settings
from data_prep.squad.records import read_features_sidecar
from data_prep.squad.writer import write_squad_features

FLAGS = flags.FLAGS
# Loaded when a job runs (TensorFlow, scikit-learn): --help answers at once.
distribution = app.lazy_import("bert_tf.training.distribution")
squad = app.lazy_import("bert_tf.tasks.squad")

# The keys of eval_results.json (evaluation.evaluate), by v2, for
# --best_metric.
_METRIC_NAMES = {
  False: ("exact_match", "f1"),
  True: (
    "exact",
    "f1",
    "total",
    "HasAns_exact",
    "HasAns_f1",
    "HasAns_total",
    "NoAns_exact",
    "NoAns_f1",
    "NoAns_total",
    "best_exact",
    "best_exact_thresh",
    "best_f1",
    "best_f1_thresh",
  ),
}
# Recorded with raw_results.jsonl (data_prep.squad_predictions checks them).
_FEATURE_SETTINGS = ("max_seq_length", "doc_stride", "max_query_length")
# One run's prediction outputs: published together (io_utils.output_set).
PREDICTION_SET = (
  "raw_results.jsonl",
  "raw_results.jsonl.settings.json",
  "predictions.json",
  "nbest_predictions.json",
  "null_odds.json",
  "eval_results.json",
)


def _sidecar(records_path):
  return records_path + ".features.jsonl"


def define_flags():
  """The original run_squad.py flags, and ours."""
  flags.DEFINE_string(
    "train_file", None, "SQuAD json for training. E.g., train-v1.1.json"
  )
  flags.DEFINE_string(
    "predict_file",
    None,
    "SQuAD json for predictions. E.g., dev-v1.1.json or test-v1.1.json",
  )
  flags.DEFINE_bool("do_predict", False, "Whether to run eval on the dev set.")
  flags.DEFINE_integer(
    "predict_batch_size", 8, "Total batch size for predictions."
  )
  flag_checks.positive("predict_batch_size")
  flags.DEFINE_bool(
    "verbose_logging",
    False,
    "If true, all of the warnings related to data processing will be "
    "printed. A number of warnings are expected for a normal SQuAD "
    "evaluation.",
  )
  finetune.define_flags(
    max_seq_length=384, records_of="data_prep.squad --is_training", splits=()
  )
  squad_flags.define_feature_flags()
  squad_flags.define_prediction_flags()


class SquadJob(finetune.Job):
  """SQuAD questions -> doc-span features -> SquadTask -> predictions and
  the official evaluation. --predict_file is the dev split: predicted with
  --do_predict and scored during training."""

  splits = {
    "train": finetune.SPLITS["train"],
    "dev": finetune.Split("do_predict", "eval.tf_record", "predict_batch_size"),
  }
  pairs = (True, "SQuAD (question + context)")
  _features = None  # the dev sidecar's features

  def check_flags(self, config):
    """The original `validate_flags_or_throw`, plus files and sizes."""
    for do_flag, file_flag in (
      ("do_train", "train_file"),
      ("do_predict", "predict_file"),
    ):
      if FLAGS[do_flag].value and not (
        file_flag == "train_file" and FLAGS.train_records
      ):
        if not FLAGS[file_flag].value:
          raise InputError(
            "If `%s` is True, then `%s` must be specified."
            % (do_flag, file_flag)
          )
        require_file(FLAGS[file_flag].value, file_flag)
    if self.periodic_eval():
      if not FLAGS.predict_file:
        raise InputError(
          "evaluation during training needs --predict_file "
          "(a dev set with answers)"
        )
      require_file(FLAGS.predict_file, "predict_file")
    check_feature_settings(
      FLAGS.max_seq_length, FLAGS.doc_stride, FLAGS.max_query_length
    )

  def read(self, split):
    v2 = FLAGS.version_2_with_negative
    if split == "train":
      examples = read_squad_examples(FLAGS.train_file, True, v2)
      random.Random(12345).shuffle(examples)
      return examples
    self.dataset = load_squad_json(FLAGS.predict_file)
    self.is_scorable = squad_evaluation.is_scorable(self.dataset, v2)
    if self.periodic_eval() and not self.is_scorable:
      raise InputError(
        "--predict_file=%s has no answers to evaluate during "
        "training" % FLAGS.predict_file
      )
    return read_squad_examples(FLAGS.predict_file, False, v2)

  def build_task(self, config, tokenizer):
    self.tokenizer = tokenizer  # the features reuse it: no second load
    return squad.SquadTask(config, FLAGS.max_seq_length)

  def write_records(self, split, path):
    is_training = split == "train"
    counts = write_squad_features(
      self.examples[split],
      FLAGS.vocab_file,
      FLAGS.do_lower_case,
      path,
      None if is_training else _sidecar(path),
      FLAGS.max_seq_length,
      FLAGS.doc_stride,
      FLAGS.max_query_length,
      is_training,
      progress=True,
      spm_model_file=FLAGS.spm_model_file,
      tokenizer=self.tokenizer,
    )
    logging.info("  Num orig examples = %d", counts.examples)
    logging.info("  Num split examples = %d", counts.features)

  def run_settings(self):
    return (
      "squad",
      {},
      {
        "doc_stride": FLAGS.doc_stride,
        "max_query_length": FLAGS.max_query_length,
      },
    )

  def _predict(self, trainer):
    """(raw results, Predictions) of the trainer's weights."""
    rows = self.predict_rows(trainer, "dev", ("unique_ids",))
    if self._features is None:  # written with the records, read once
      self._features = read_features_sidecar(_sidecar(self.records("dev")))[1]
    features = self._features
    # tolist(): Python floats holding the exact float32 values, so
    # re-scoring raw_results.jsonl later gives the same predictions.
    results = [
      squad_postprocess.RawResult(
        int(row["unique_ids"]),
        row["start_logits"].tolist(),
        row["end_logits"].tolist(),
      )
      for row in tqdm.tqdm(
        rows,
        total=len(features),
        unit="feature",
        disable=None if FLAGS.progress else True,
      )
    ]
    return results, squad_postprocess.compute_predictions(
      self.examples["dev"],
      features,
      results,
      FLAGS.n_best_size,
      FLAGS.max_answer_length,
      FLAGS.do_lower_case,
      FLAGS.version_2_with_negative,
      FLAGS.null_score_diff_threshold,
      bool(FLAGS.spm_model_file),
    )

  def eval_results(self, trainer):
    return squad_evaluation.evaluate_predictions(
      self.dataset, self._predict(trainer)[1], FLAGS.version_2_with_negative
    )

  def metric_names(self):
    return _METRIC_NAMES[FLAGS.version_2_with_negative]

  def write_outputs(self, trainer):
    logging.info("***** Running predictions *****")
    results, predictions = self._predict(trainer)
    if not distribution.is_chief(trainer.strategy):
      return  # Every worker predicts; only the chief writes the outputs.
    with output_set(FLAGS.output_dir, PREDICTION_SET):
      self._write_predictions(results, predictions)

  def _write_predictions(self, results, predictions):
    squad_postprocess.write_raw_results(
      self.output_path("raw_results.jsonl"),
      results,
      {name: FLAGS[name].value for name in _FEATURE_SETTINGS},
    )
    squad_postprocess.write_prediction_files(predictions, FLAGS.output_dir)
    logging.info(
      "%d predictions written to %s",
      len(predictions.predictions),
      FLAGS.output_dir,
    )
    if not self.is_scorable:
      logging.info(
        "%s has no answers: no eval_results.json", FLAGS.predict_file
      )
      return
    squad_postprocess.write_eval_results(
      FLAGS.output_dir,
      squad_evaluation.evaluate_predictions(
        self.dataset, predictions, FLAGS.version_2_with_negative
      ),
    )


def main(_):
  finetune.run(SquadJob(FLAGS))


def run():
  """Console-script entry point."""
  define_flags()
  app.run_app(main)


if __name__ == "__main__":
  run()
