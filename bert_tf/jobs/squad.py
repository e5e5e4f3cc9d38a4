"""The Job behind run_squad.py: SQuAD JSON -> doc-stride features -> SquadTask
-> the n-best predictions files and the official eval_results.json.

Its flags are defined by the script (`define_flags`); the Job reads them
from the FlagValues it is given.
"""

import random

from absl import logging
import tqdm

from bert_tf.io_utils import InputError
from bert_tf.io_utils import output_set
from bert_tf.io_utils import require_file
from bert_tf.jobs import finetune
from bert_tf.runtime import app
from data_prep.squad import evaluation as squad_evaluation
from data_prep.squad import postprocess as squad_postprocess
from data_prep.squad.example import load_squad_json
from data_prep.squad.example import read_squad_examples
from data_prep.squad.features import check_feature_settings
from data_prep.squad.records import read_features_sidecar
from data_prep.squad.writer import write_squad_features

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
      if self.flags[do_flag].value and not (
        file_flag == "train_file" and self.flags.train_records
      ):
        if not self.flags[file_flag].value:
          raise InputError(
            "If `%s` is True, then `%s` must be specified."
            % (do_flag, file_flag)
          )
        require_file(self.flags[file_flag].value, file_flag)
    if self.periodic_eval():
      if not self.flags.predict_file:
        raise InputError(
          "evaluation during training needs --predict_file "
          "(a dev set with answers)"
        )
      require_file(self.flags.predict_file, "predict_file")
    check_feature_settings(
      self.flags.max_seq_length,
      self.flags.doc_stride,
      self.flags.max_query_length,
    )

  def read(self, split):
    v2 = self.flags.version_2_with_negative
    if split == "train":
      examples = read_squad_examples(self.flags.train_file, True, v2)
      random.Random(12345).shuffle(examples)
      return examples
    self.dataset = load_squad_json(self.flags.predict_file)
    self.is_scorable = squad_evaluation.is_scorable(self.dataset, v2)
    if self.periodic_eval() and not self.is_scorable:
      raise InputError(
        "--predict_file=%s has no answers to evaluate during "
        "training" % self.flags.predict_file
      )
    return read_squad_examples(self.flags.predict_file, False, v2)

  def build_task(self, config, tokenizer):
    self.tokenizer = tokenizer  # the features reuse it: no second load
    return squad.SquadTask(config, self.flags.max_seq_length)

  def write_records(self, split, path):
    is_training = split == "train"
    counts = write_squad_features(
      self.examples[split],
      self.flags.vocab_file,
      self.flags.do_lower_case,
      path,
      None if is_training else _sidecar(path),
      self.flags.max_seq_length,
      self.flags.doc_stride,
      self.flags.max_query_length,
      is_training,
      progress=True,
      spm_model_file=self.flags.spm_model_file,
      tokenizer=self.tokenizer,
    )
    logging.info("  Num orig examples = %d", counts.examples)
    logging.info("  Num split examples = %d", counts.features)

  def run_settings(self):
    return (
      "squad",
      {},
      {
        "doc_stride": self.flags.doc_stride,
        "max_query_length": self.flags.max_query_length,
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
        disable=None if self.flags.progress else True,
      )
    ]
    return results, squad_postprocess.compute_predictions(
      self.examples["dev"],
      features,
      results,
      self.flags.n_best_size,
      self.flags.max_answer_length,
      self.flags.do_lower_case,
      self.flags.version_2_with_negative,
      self.flags.null_score_diff_threshold,
      bool(self.flags.spm_model_file),
    )

  def eval_results(self, trainer):
    return squad_evaluation.evaluate_predictions(
      self.dataset,
      self._predict(trainer)[1],
      self.flags.version_2_with_negative,
    )

  def metric_names(self):
    return _METRIC_NAMES[self.flags.version_2_with_negative]

  def write_outputs(self, trainer):
    logging.info("***** Running predictions *****")
    results, predictions = self._predict(trainer)
    if not distribution.is_chief(trainer.strategy):
      return  # Every worker predicts; only the chief writes the outputs.
    with output_set(self.flags.output_dir, PREDICTION_SET):
      self._write_predictions(results, predictions)

  def _write_predictions(self, results, predictions):
    squad_postprocess.write_raw_results(
      self.output_path("raw_results.jsonl"),
      results,
      {name: self.flags[name].value for name in _FEATURE_SETTINGS},
    )
    squad_postprocess.write_prediction_files(predictions, self.flags.output_dir)
    logging.info(
      "%d predictions written to %s",
      len(predictions.predictions),
      self.flags.output_dir,
    )
    if not self.is_scorable:
      logging.info(
        "%s has no answers: no eval_results.json", self.flags.predict_file
      )
      return
    squad_postprocess.write_eval_results(
      self.flags.output_dir,
      squad_evaluation.evaluate_predictions(
        self.dataset, predictions, self.flags.version_2_with_negative
      ),
    )
