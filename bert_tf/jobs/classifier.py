"""The Job behind run_classifier.py: GLUE / XNLI / TSV examples ->
ClassificationTask -> eval_results.txt, test_results.tsv (and a GLUE
submission file).

Its flags are defined by the script (`define_flags`); the Job reads its
config (below), built from those flags or by the Python API.
"""

import dataclasses

from bert_tf.io_utils import InputError
from bert_tf.jobs import config as job_config
from bert_tf.jobs import finetune
from bert_tf.runtime import app
from bert_tf.tasks.result_files import write_eval_results
from bert_tf.tasks.result_files import write_lines
from data_prep.classifier import flags as classifier_flags
from data_prep.classifier.features import write_examples_to_tfrecord

# Loaded when a job runs (TensorFlow, scikit-learn): --help answers at once.
classification = app.lazy_import("bert_tf.tasks.classification")


classifier_results = app.lazy_import("bert_tf.tasks.classifier_results")


@dataclasses.dataclass
class ClassifierConfig(job_config.FinetuneConfig):
  """run_classifier.py's flags."""

  data_dir: str | None = None
  task_name: str | None = None
  glue_submission_file: str | None = None
  # --task_name=tsv: the user's own files (data_prep/classifier/flags.py).
  text_a_column: int | None = None
  text_b_column: int | None = None
  label_column: int | None = None
  labels: list[str] | None = None
  regression: bool = False
  skip_header: bool = False
  multi_label: bool = False
  multi_label_separator: str = ","
  xnli_language: str = "zh"


class ClassifierJob(finetune.Job):
  """GLUE / XNLI / TSV examples -> ClassificationTask -> eval_results.txt,
  test_results.tsv."""

  required = ("data_dir", "task_name", "bert_config_file", "output_dir")

  def check_flags(self, config):
    if self.config.glue_submission_file and not self.config.do_predict:
      raise InputError("--glue_submission_file needs --do_predict")
    if self.config.glue_submission_file and self.config.multi_label:
      raise InputError("--glue_submission_file: not for --multi_label")
    self.processor = classifier_flags.processor_from_flags(self.config)
    self.label_list = self.processor.get_labels()

  def read(self, split):
    return self.processor.get_examples(split)

  def build_task(self, config, tokenizer):
    self.tokenizer = tokenizer
    num_labels = 1 if self.processor.is_regression else len(self.label_list)
    return classification.ClassificationTask(
      config,
      num_labels,
      self.config.max_seq_length,
      self.processor.is_multi_label,
    )

  def segments(self):
    return (
      any(e.text_b for examples in self.examples.values() for e in examples),
      "--task_name=%s" % self.processor.name,
    )

  def write_records(self, split, path):
    self.write_padded(
      split,
      path,
      lambda examples, path, pad: write_examples_to_tfrecord(
        examples,
        self.label_list,
        self.config.max_seq_length,
        self.tokenizer,
        path,
        pad_to_multiple_of=pad,
        multi_label=self.processor.is_multi_label,
      ),
    )

  def run_settings(self):
    return (
      "classifier",
      {
        "task_name": self.processor.name,
        "labels": self.label_list,
        "regression": self.processor.is_regression,
        "multi_label": self.processor.is_multi_label,
      },
      {},
    )

  def _multi_labels(self):
    return self.label_list if self.processor.is_multi_label else None

  def eval_results(self, trainer):
    return classifier_results.eval_results(
      self.processor.name,
      self.predict_rows(trainer, "dev", _KEYS),
      self.batch_size("dev"),
      self.processor.is_regression,
      trainer.global_step,
      self._multi_labels(),
    )

  def metric_names(self):
    return classifier_results.metric_names(
      self.processor.name, self.processor.is_regression, self._multi_labels()
    )

  def write_outputs(self, trainer):
    if self.config.do_eval:
      write_eval_results(
        self.output_path("eval_results.txt"), self.eval_results(trainer)
      )
    if self.config.do_predict:
      rows = self.predict_rows(trainer, "test", _KEYS)
      write_lines(
        self.output_path("test_results.tsv"),
        classifier_results.prediction_lines(rows, self.processor.is_regression),
      )
      if self.config.glue_submission_file:
        write_lines(
          self.config.glue_submission_file,
          classifier_results.glue_submission_lines(rows, self.label_list),
        )


_KEYS = ("label_ids", "is_real_example")
