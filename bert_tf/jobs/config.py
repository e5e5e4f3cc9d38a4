"""The typed settings of a fine-tuning Job, one field per script flag.

A script builds its Job's config from its parsed flags
(`ClassifierConfig.from_flags(FLAGS)`); the Python API builds the same
config from keyword arguments, with in-memory `examples` instead of data
files. Field names, types and defaults are the flags' (a test compares
them for every script), so a Job reads `self.config.learning_rate`
whichever front door built it. The task configs (`ClassifierConfig`, ...)
live beside their Jobs and add the task's own flags.

Example:
    config = ClassifierConfig(task_name="tsv", labels=["0", "1"],
                              output_dir="/tmp/run", do_train=True,
                              examples={"train": [...]})
    finetune.run(ClassifierJob(config))
"""

import dataclasses


class Config:
  """`from_flags` and `replace` for the configs below."""

  # Fields that are not flags.
  NOT_FLAGS = ("examples",)

  @classmethod
  def from_flags(cls, flag_values):
    """The config of parsed absl `flag_values` (a field whose flag the
    script does not define keeps its default)."""
    return cls(
      **{
        field.name: flag_values[field.name].value
        for field in dataclasses.fields(cls)
        if field.name not in cls.NOT_FLAGS and field.name in flag_values
      }
    )

  def replace(self, **changes):
    return dataclasses.replace(self, **changes)


@dataclasses.dataclass
class EngineConfig(Config):
  """What every training Job is configured by: the model files, precision,
  the engine, and evaluation during training."""

  bert_config_file: str | None = None
  vocab_file: str | None = None
  init_checkpoint: str | None = None
  max_seq_length: int = 128
  output_dir: str | None = None
  do_train: bool = False
  do_eval: bool = False
  train_batch_size: int = 32
  eval_batch_size: int = 8
  learning_rate: float = 5e-5
  optimizer: str = "adamw"
  gradient_accumulation_steps: int = 1
  # Precision and engine.
  dtype: str = "float32"
  use_xla: bool = False
  seed: int | None = None
  deterministic: bool = False
  progress: bool = True
  iterations_per_loop: int = 1000
  save_checkpoints_steps: int = 1000
  keep_checkpoint_max: int = 5
  use_tpu: bool = False
  tpu_name: str | None = None
  tpu_zone: str | None = None
  gcp_project: str | None = None
  master: str | None = None
  num_tpu_cores: int = 8
  num_gpus: int | None = None
  # Evaluation during training.
  eval_every_steps: int | None = None
  best_metric: str | None = None
  best_mode: str = "max"
  early_stopping_patience: int | None = None


@dataclasses.dataclass
class FinetuneConfig(EngineConfig):
  """What every fine-tuning Job is configured by (run_classifier.py's
  flags, the engine and evaluation flags, freezing)."""

  do_lower_case: bool = True
  spm_model_file: str | None = None
  overwrite_output_dir: bool = False
  do_predict: bool = False
  train_records: str | None = None
  predict_batch_size: int = 8
  num_train_epochs: float = 3.0
  warmup_proportion: float = 0.1
  # Freezing: the embeddings and lowest N layers, or a schedule of them.
  num_frozen_layers: int = 0
  unfreeze_schedule: str | None = None
  eval_every_epochs: float | None = None
  predict_checkpoint: str = "latest"
  # In-memory examples by split ("train", "dev", "test"), read instead of
  # the data files (the API's inputs).
  examples: dict | None = dataclasses.field(default=None, repr=False)
