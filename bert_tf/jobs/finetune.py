"""The fine-tuning skeleton run_classifier, run_squad, run_ner and
run_multiple_choice share.

What the original scripts each repeated — the required and `--do_*` flag
checks, the model config and vocabulary checks, reading every split before
any work, train steps and warmup from the epochs (or from `--train_records`),
evaluation during training, the output-dir lock, records written once per
split, the best/latest predict checkpoint, and the results files — happens
here, once. A task describes only what is its own: its script's flags
(with `finetune_flags`), and in its `Job` how it reads a split, its Task,
how it writes a split's records, and its output formats.


Example (a Job and its script):
    def define_flags():
      finetune_flags.define_flags(max_seq_length=128, records_of="data_prep.x")
      flags.DEFINE_string("data_dir", None, "...")

    class MyJob(finetune.Job):
      required = ("data_dir", "bert_config_file", "output_dir")
      def read(self, split): ...            # examples of `split`
      def build_task(self, config, tokenizer): ...
      def write_records(self, split, path): ...
      def eval_results(self, trainer): ...  # {metric: value} on dev
      def metric_names(self): ...
      def write_outputs(self, trainer): ...

    def main(_):
      finetune.run(MyJob(flags.FLAGS))
"""

import collections
import os

from absl import logging

from bert_tf.io_utils import InputError
from bert_tf.io_utils import make_output_dir
from bert_tf.io_utils import require_file
from bert_tf.jobs import eval_flags
from bert_tf.modeling.bert_config import BertConfig
from bert_tf.runtime import app
from bert_tf.tokenizers.loading import load_tokenizer

# Loaded when a job runs: --help answers before TensorFlow is imported.
input_pipeline = app.lazy_import("bert_tf.training.input_pipeline")
run_config = app.lazy_import("bert_tf.runs.run_config")
wiring = app.lazy_import("bert_tf.jobs.wiring")

# A built model a run trains and evaluates instead of the one
# --bert_config_file, --vocab_file and --init_checkpoint describe (the
# Python API's): its BertConfig, tokenizer and Keras task model.
Pretrained = collections.namedtuple("Pretrained", "bert_config tokenizer model")

# A split of a job: the `--do_*` flag that asks for it, its TFRecord file in
# output_dir and its batch-size flag.
Split = collections.namedtuple("Split", "do_flag record batch_flag")
SPLITS = {
  "train": Split("do_train", "train.tf_record", "train_batch_size"),
  "dev": Split("do_eval", "eval.tf_record", "eval_batch_size"),
  "test": Split("do_predict", "predict.tf_record", "predict_batch_size"),
}


class Job:
  """One fine-tuning script's own parts; `run(job)` does the rest.

  Subclasses set `required` (flags that must be given) and implement the
  methods that raise NotImplementedError. `self.examples` holds what `read`
  returned for every split the run needs; `self.task` the Task.
  """

  splits = SPLITS
  required = ("bert_config_file", "output_dir")
  # (whether the input has a segment B, what it is) when fixed; else
  # `segments()`.
  pairs = None

  def __init__(self, config):
    self.config = config
    self.examples = {}
    self.task = None
    self._records = {}

  # --- What a script provides. ---------------------------------------------

  def check_flags(self, config):
    """The script's own flag checks, before any file is read."""

  def read(self, split):
    """The examples of `split` (every bad line fails here, before work)."""
    raise NotImplementedError

  def build_task(self, config, tokenizer):
    """The Task (after `read`)."""
    raise NotImplementedError

  def segments(self):
    """(whether the input has a segment B, what it is), for the config's
    type_vocab_size check."""
    return self.pairs

  def write_records(self, split, path):
    """Featurizes `self.examples[split]` into `path`."""
    raise NotImplementedError

  def num_train_examples(self):
    """Training examples the steps are counted from."""
    return len(self.examples["train"])

  def train_value_limits(self):
    """{feature: n}: values --train_records must hold in [0, n)."""
    return None

  def train_dataset_fn(self, files):
    """The training input over TFRecord `files`."""
    return input_pipeline.training_dataset_fn(
      files, self.task.feature_spec(True), self.config.train_batch_size
    )

  def run_settings(self):
    """(task kind, head settings, sequence settings) for run_config.json:
    what export and later runs need to rebuild and feed the model."""
    raise NotImplementedError

  def eval_results(self, trainer):
    """{metric: value} of the dev split for the trainer's weights."""
    raise NotImplementedError

  def metric_names(self):
    """The keys `eval_results` returns (to check --best_metric early)."""
    raise NotImplementedError

  def prepare_output_dir(self):
    """Files the run writes once output_dir is locked (e.g. labels)."""

  def write_outputs(self, trainer):
    """The --do_eval / --do_predict outputs, after training."""
    raise NotImplementedError

  # --- What the skeleton gives a script. -----------------------------------

  @property
  def in_memory(self):
    """Whether the examples come with the config (the API's), not files."""
    return self.config.examples is not None

  def read_split(self, split):
    """`split`'s examples: the config's in-memory data, else `read`."""
    if self.in_memory:
      return self.from_data(split, self.config.examples[split])
    return self.read(split)

  def from_data(self, split, data):
    """The examples of in-memory `data` (what `read` returns, by default)."""
    return data

  def wanted(self, split):
    """Whether this run reads `split` (dev also for periodic evaluation;
    train not with --train_records)."""
    if split == "train" and self.config.train_records:
      return False
    if self.in_memory:
      return split in self.config.examples
    return bool(
      getattr(self.config, self.splits[split].do_flag)
      or (split == "dev" and self.periodic_eval())
    )

  def periodic_eval(self):
    return any(
      value is not None for value in eval_flags.eval_every(self.config)
    )

  def batch_size(self, split):
    return getattr(self.config, self.splits[split].batch_flag)

  def records(self, split):
    """`split`'s TFRecord in output_dir, written once per run."""
    if split not in self._records:
      path = os.path.join(self.config.output_dir, self.splits[split].record)
      self.write_records(split, path)
      self._records[split] = path
    return self._records[split]

  def write_padded(self, split, path, write):
    """`write(examples, path, pad_to_multiple_of)` for `split`'s examples:
    the original pads eval/predict sets to whole batches only on TPU."""
    examples, batch_size = self.examples[split], self.batch_size(split)
    pad = batch_size if self.config.use_tpu and split != "train" else None
    count = write(examples, path, pad)
    logging.info(
      "***** %s: %d examples (%d + %d padding), batch size %d",
      split,
      count,
      len(examples),
      count - len(examples),
      batch_size,
    )

  def predict_rows(self, trainer, split, feature_keys=None):
    """The model's outputs (+ `feature_keys`, default the Task's
    `predict_keys`) for every record of `split`, in file order."""
    batch_size = self.batch_size(split)
    dataset = input_pipeline.eval_dataset(
      [self.records(split)], self.task.feature_spec(False), batch_size
    )
    keys = self.task.predict_keys if feature_keys is None else feature_keys
    return list(trainer.predict(dataset, batch_size, feature_keys=keys))

  def output_path(self, name):
    return os.path.join(self.config.output_dir, name)


def _check_flags(job, pretrained):
  """Flags and files every job needs; -> BertConfig."""
  f = job.config
  # Data flags are not needed for in-memory examples, nor model files for a
  # built model.
  skip = ("data_dir",) if job.in_memory else ()
  if pretrained:
    skip += ("bert_config_file", "vocab_file")
  for name in job.required:
    if not getattr(f, name) and name not in skip:
      raise InputError("--%s is required" % name)
  wiring.check_do_flags(
    f, "do_train", *(job.splits[s].do_flag for s in job.splits if s != "train")
  )
  eval_flags.check_eval_flags(f, training=f.do_train)
  if pretrained:
    config = pretrained.bert_config
  else:
    wiring.check_case(f.do_lower_case, f.init_checkpoint)
    if not f.spm_model_file:
      require_file(f.vocab_file, "vocab_file")
    require_file(f.bert_config_file, "bert_config_file")
    config = BertConfig.from_json_file(f.bert_config_file)
  config.check_max_seq_length(f.max_seq_length)
  if f.num_frozen_layers > config.num_hidden_layers:  # before any output
    raise InputError(
      "--num_frozen_layers=%d: must be between 0 and the "
      "model's %d layers" % (f.num_frozen_layers, config.num_hidden_layers)
    )
  wiring.unfreeze_schedule(f, config)  # checked before any output
  job.check_flags(config)
  return config


def _train_size(job):
  """(number of training examples, --train_records files or None)."""
  if not job.config.train_records:
    return job.num_train_examples(), None
  files, count = input_pipeline.train_records(
    job.config.train_records,
    job.task.feature_spec(True),
    job.train_value_limits(),
  )
  return count, files


def _settings(job, config):
  """This run's `run_config.RunConfig`."""
  f = job.config
  task, head, sequence = job.run_settings()
  training = {
    name: getattr(f, name)
    for name in (
      "learning_rate",
      "num_train_epochs",
      "train_batch_size",
      "warmup_proportion",
      "num_frozen_layers",
      "init_checkpoint",
    )
  }
  return run_config.RunConfig(
    task,
    head,
    run_config.tokenizer_settings(
      f.vocab_file, f.do_lower_case, f.spm_model_file
    ),
    f.max_seq_length,
    config.to_dict(),
    sequence,
    training,
    bert_config_file=f.bert_config_file,
  )


def _record_settings(job, settings):
  """run_config.json in the locked output_dir: written for a new run; a
  run of another model is refused (or removed with --overwrite_output_dir);
  other training settings of a run that already trained are reported."""
  folder = job.config.output_dir
  if job.config.overwrite_output_dir:
    clear_run_folder(folder, _input_paths(job.config))
  changed = run_config.check_or_write(folder, settings)
  if changed and job.config.do_train:
    logging.warning(
      "--output_dir=%s holds a run with %s; it resumes from its latest "
      "checkpoint and is not retrained (--overwrite_output_dir to start "
      "over)",
      folder,
      ", ".join(
        "%s=%s (now %s)" % (k, old, new)
        for k, (old, new) in sorted(changed.items())
      ),
    )


def clear_run_folder(folder, inputs):
  """Removes what the runs recorded in a locked run folder wrote, never its
  lock, what it held before them, or a path of `inputs` ({flag: value}):
  an input inside is refused (`run_config.clear`)."""
  run_config.clear(folder, inputs)


def run(job, pretrained=None, listener=None):
  """Checks, reads, trains, evaluates and predicts as the config asks;
  -> (the Trainer, its training history).

  Args:
    job: a `Job` with its config.
    pretrained: a `Pretrained` model to train instead of the config's
      model files (the API's).
    listener: the API's Keras callbacks: `listener.begin(metric_names,
      num_steps)` before any output -> the evaluation cadence in steps (None:
      the config's), then `listener(trainer, metrics)` after each evaluation
      -> True stops training.
  """
  f = job.config
  config = _check_flags(job, pretrained)
  # Every file is read now, so a bad line fails before any training.
  job.examples = {
    split: job.read_split(split) for split in job.splits if job.wanted(split)
  }
  if pretrained:
    tokenizer = pretrained.tokenizer
  else:
    tokenizer = load_tokenizer(f.vocab_file, f.do_lower_case, f.spm_model_file)
    config.check_vocab(tokenizer.vocab, f.spm_model_file or f.vocab_file)
  job.task = job.build_task(config, tokenizer)
  if pretrained:
    job.task.build_model = lambda: pretrained.model
  config.check_segments(*job.segments())
  num_steps, num_warmup, steps_per_epoch, train_files = 0, 0, None, None
  num_train = 0
  if f.do_train:
    num_train, train_files = _train_size(job)
    steps_per_epoch = num_train / f.train_batch_size
    num_steps, num_warmup = wiring.train_steps(
      num_train, f.train_batch_size, f.num_train_epochs, f.warmup_proportion
    )
  # Before any output, so that a bad --best_metric leaves nothing behind.
  every = listener.begin(job.metric_names(), num_steps) if listener else None
  hook = wiring.eval_hook(
    f,
    job.eval_results if "dev" in job.examples else lambda trainer: {},
    f.bert_config_file,
    steps_per_epoch,
    job.metric_names(),
    listener,
    every,
  )
  settings = _settings(job, config)
  make_output_dir(f.output_dir)
  _record_settings(job, settings)
  job.prepare_output_dir()
  trainer = wiring.build_trainer(f, job.task, num_steps, num_warmup)
  if f.do_train:
    files = train_files or [job.records("train")]
    # The original's log lines.
    logging.info("***** Running training *****")
    logging.info("  Num examples = %d", num_train)
    logging.info("  Batch size = %d", f.train_batch_size)
    logging.info("  Num steps = %d", num_steps)
    history = trainer.train(
      job.train_dataset_fn(files), num_steps, eval_hook=hook
    )
  else:
    history = []
  if any(getattr(f, job.splits[s].do_flag) for s in job.splits if s != "train"):
    wiring.restore_predict_checkpoint(f, trainer)
    job.write_outputs(trainer)
  return trainer, history


# Path-like settings that are not read: the run's outputs, and a choice.
_NOT_INPUTS = ("output_dir", "glue_submission_file", "predict_checkpoint")


def _input_paths(config):
  """{flag: value} of the settings naming files or folders the run reads."""
  return {
    name: value
    for name, value in vars(config).items()
    if isinstance(value, str)
    and name.endswith(("_file", "_dir", "_checkpoint", "_records"))
    and name not in _NOT_INPUTS
  }
