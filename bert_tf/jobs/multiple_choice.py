"""The Job behind run_multiple_choice.py: SWAG-style examples ->
MultipleChoiceTask -> eval_results.txt, test_results.tsv.

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
from data_prep.multiple_choice import examples as mc_examples
from data_prep.multiple_choice.features import write_records

# Loaded when a job runs (TensorFlow, scikit-learn): --help answers at once.
classifier_results = app.lazy_import("bert_tf.tasks.classifier_results")


input_pipeline = app.lazy_import("bert_tf.training.input_pipeline")


multiple_choice = app.lazy_import("bert_tf.tasks.multiple_choice")


@dataclasses.dataclass
class MultipleChoiceConfig(job_config.FinetuneConfig):
  """run_multiple_choice.py's flags (the BERT paper's SWAG settings)."""

  data_dir: str | None = None
  train_batch_size: int = 16
  learning_rate: float = 2e-5


class MultipleChoiceJob(finetune.Job):
  """SWAG / JSON-lines examples -> MultipleChoiceTask -> eval_results.txt,
  test_results.tsv."""

  pairs = (True, "multiple choice (context + ending)")
  _first = None  # (path, choices) of the first split read

  def check_flags(self, config):
    only_records = self.config.train_records and not (
      self.config.do_eval or self.config.do_predict or self.periodic_eval()
    )
    if not (self.config.data_dir or only_records or self.in_memory):
      raise InputError("--data_dir is required")

  def read(self, split):
    path = mc_examples.split_file(self.config.data_dir, split)
    return self._checked(mc_examples.read_examples(path, split), path)

  def from_data(self, split, data):
    return self._checked(data, "%s inputs" % split)

  def _checked(self, examples, path):
    """`examples`, with as many choices as the first split read."""
    count = len(examples[0].endings)
    first = self._first = self._first or (path, count)
    if count != first[1]:
      raise InputError(
        "%s: %d choices per example, but %s has %d; every "
        "split needs the same number" % ((path, count) + first)
      )
    return examples

  def build_task(self, config, tokenizer):
    self.tokenizer = tokenizer
    if self.examples:
      num_choices = self._first[1]
    else:
      num_choices = self._choices_in_records(
        tokenizer.convert_tokens_to_ids(["[CLS]"])[0]
      )
    return multiple_choice.MultipleChoiceTask(
      config, num_choices, self.config.max_seq_length
    )

  def _choices_in_records(self, cls_id):
    """The number of choices of --train_records: every choice's
    max_seq_length ids start with [CLS] (the length alone is ambiguous)."""
    files = input_pipeline.record_files(
      self.config.train_records, "train_records"
    )
    ids = input_pipeline.first_record(files).get("input_ids", [])
    seq = self.config.max_seq_length
    if (
      not ids
      or len(ids) % seq
      or any(ids[i] != cls_id for i in range(0, len(ids), seq))
    ):
      raise InputError(
        "--train_records=%s: input_ids are not choices of "
        "--max_seq_length=%d, each starting with [CLS]" % (files[0], seq)
      )
    return len(ids) // seq

  def train_value_limits(self):
    return {"label_ids": self.task.num_choices}

  def write_records(self, split, path):
    self.write_padded(
      split,
      path,
      lambda examples, path, pad: write_records(
        examples,
        self.config.max_seq_length,
        self.tokenizer,
        path,
        pad_to_multiple_of=pad,
      ),
    )

  def run_settings(self):
    return "multiple_choice", {"num_choices": self.task.num_choices}, {}

  def eval_results(self, trainer):
    return classifier_results.eval_results(
      self.task.name,
      self.predict_rows(trainer, "dev"),
      self.batch_size("dev"),
      False,
      trainer.global_step,
    )

  def metric_names(self):
    return classifier_results.metric_names(self.task.name, False)

  def write_outputs(self, trainer):
    if self.config.do_eval:
      write_eval_results(
        self.output_path("eval_results.txt"), self.eval_results(trainer)
      )
    if self.config.do_predict:
      write_lines(
        self.output_path("test_results.tsv"),
        classifier_results.prediction_lines(self.predict_rows(trainer, "test")),
      )
