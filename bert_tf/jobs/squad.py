"""The Job behind run_squad.py: SQuAD JSON -> doc-stride features -> SquadTask
-> the n-best predictions files and the official eval_results.json.

Its flags are defined by the script (`define_flags`); the Job reads its
config (below), built from those flags or by the Python API.
"""

import dataclasses
import random

from absl import logging
import tqdm

from bert_tf.io_utils import InputError
from bert_tf.io_utils import output_set
from bert_tf.io_utils import require_file
from bert_tf.jobs import config as job_config
from bert_tf.jobs import finetune
from bert_tf.runtime import app
from data_prep.squad import evaluation as squad_evaluation
from data_prep.squad import postprocess as squad_postprocess
from data_prep.squad import raw_results
from data_prep.squad.example import data_examples
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


def _shuffled(examples):
  """Training examples in the original's order (a fixed shuffle)."""
  random.Random(12345).shuffle(examples)
  return examples


def _sidecar(records_path):
  return records_path + ".features.jsonl"


@dataclasses.dataclass
class SquadConfig(job_config.FinetuneConfig):
  """run_squad.py's flags (its dev split is --predict_file)."""

  # run_squad.py scores --predict_file when predicting: no --do_eval.
  NOT_FLAGS = job_config.Config.NOT_FLAGS + ("do_eval", "eval_batch_size")
  max_seq_length: int = 384
  train_file: str | None = None
  predict_file: str | None = None
  verbose_logging: bool = False
  doc_stride: int = 128
  max_query_length: int = 64
  n_best_size: int = 20
  max_answer_length: int = 30
  null_score_diff_threshold: float = 0.0
  version_2_with_negative: bool = False


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
      if self.in_memory:
        break
      if getattr(self.config, do_flag) and not (
        file_flag == "train_file" and self.config.train_records
      ):
        if not getattr(self.config, file_flag):
          raise InputError(
            "If `%s` is True, then `%s` must be specified."
            % (do_flag, file_flag)
          )
        require_file(getattr(self.config, file_flag), file_flag)
    if self.periodic_eval() and not self.in_memory:
      if not self.config.predict_file:
        raise InputError(
          "evaluation during training needs --predict_file "
          "(a dev set with answers)"
        )
      require_file(self.config.predict_file, "predict_file")
    check_feature_settings(
      self.config.max_seq_length,
      self.config.doc_stride,
      self.config.max_query_length,
    )

  def read(self, split):
    v2 = self.config.version_2_with_negative
    if split == "train":
      return _shuffled(read_squad_examples(self.config.train_file, True, v2))
    return self._dev(
      load_squad_json(self.config.predict_file),
      lambda: read_squad_examples(self.config.predict_file, False, v2),
      "--predict_file=%s" % self.config.predict_file,
    )

  def from_data(self, split, data):
    """`data`: a SQuAD JSON "data" list (the API's)."""
    v2 = self.config.version_2_with_negative
    if split == "train":
      return _shuffled(data_examples(data, "inputs", True, v2)[0])
    return self._dev(
      data,
      lambda: data_examples(data, "inputs", False, v2)[0],
      "validation data",
    )

  def _dev(self, dataset, examples, name):
    """The dev examples of `dataset` (kept to score the predictions)."""
    self.dataset = dataset
    v2 = self.config.version_2_with_negative
    self.is_scorable = squad_evaluation.is_scorable(dataset, v2)
    if self.periodic_eval() and not self.is_scorable:
      raise InputError("%s has no answers to evaluate during training" % name)
    return examples()

  def build_task(self, config, tokenizer):
    self.tokenizer = tokenizer  # the features reuse it: no second load
    return squad.SquadTask(config, self.config.max_seq_length)

  def write_records(self, split, path):
    is_training = split == "train"
    counts = write_squad_features(
      self.examples[split],
      self.config.vocab_file,
      self.config.do_lower_case,
      path,
      None if is_training else _sidecar(path),
      self.config.max_seq_length,
      self.config.doc_stride,
      self.config.max_query_length,
      is_training,
      progress=True,
      spm_model_file=self.config.spm_model_file,
      tokenizer=self.tokenizer,
    )
    logging.info("  Num orig examples = %d", counts.examples)
    logging.info("  Num split examples = %d", counts.features)

  def run_settings(self):
    return (
      "squad",
      {},
      {
        "doc_stride": self.config.doc_stride,
        "max_query_length": self.config.max_query_length,
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
      raw_results.RawResult(
        int(row["unique_ids"]),
        row["start_logits"].tolist(),
        row["end_logits"].tolist(),
      )
      for row in tqdm.tqdm(
        rows,
        total=len(features),
        unit="feature",
        disable=None if self.config.progress else True,
      )
    ]
    return results, squad_postprocess.compute_predictions(
      self.examples["dev"],
      features,
      results,
      self.config.n_best_size,
      self.config.max_answer_length,
      self.config.do_lower_case,
      self.config.version_2_with_negative,
      self.config.null_score_diff_threshold,
      bool(self.config.spm_model_file),
    )

  def eval_results(self, trainer):
    return squad_evaluation.evaluate_predictions(
      self.dataset,
      self._predict(trainer)[1],
      self.config.version_2_with_negative,
    )

  def metric_names(self):
    return _METRIC_NAMES[self.config.version_2_with_negative]

  def write_outputs(self, trainer):
    logging.info("***** Running predictions *****")
    results, predictions = self._predict(trainer)
    if not distribution.is_chief(trainer.strategy):
      return  # Every worker predicts; only the chief writes the outputs.
    with output_set(self.config.output_dir, PREDICTION_SET):
      self._write_predictions(results, predictions)

  def _write_predictions(self, results, predictions):
    raw_results.write_raw_results(
      self.output_path("raw_results.jsonl"),
      results,
      {name: getattr(self.config, name) for name in _FEATURE_SETTINGS},
    )
    squad_postprocess.write_prediction_files(
      predictions, self.config.output_dir
    )
    logging.info(
      "%d predictions written to %s",
      len(predictions.predictions),
      self.config.output_dir,
    )
    if not self.is_scorable:
      logging.info(
        "%s has no answers: no eval_results.json", self.config.predict_file
      )
      return
    squad_postprocess.write_eval_results(
      self.config.output_dir,
      squad_evaluation.evaluate_predictions(
        self.dataset, predictions, self.config.version_2_with_negative
      ),
    )
