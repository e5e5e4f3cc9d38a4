"""`fit` of the task models: the task's Job, configured from keywords.

The model is trained by the same skeleton as its script
(`bert_tf.jobs.finetune.run`): the script's featurizer and windows, TFRecords
in the run folder, the original optimizer and schedule, freezing and
gradual unfreezing, evaluation during training, best/ and early stopping.
What Keras users expect on top: `validation_data` evaluated every epoch
(the script's dev metrics, as `val_<name>`), Keras callbacks
(`EarlyStopping`, `ModelCheckpoint`, `TensorBoard`, ...) called at each
evaluation with `model.stop_training` honoured, Keras' progress lines
(`verbose`), and a `keras.callbacks.History` back.

A call is all or nothing: a refused or diverging fit leaves the model's
weights as they were.
"""

import math
import re
import shutil
import sys
import tempfile

import keras
import numpy as np

from bert_tf.io_utils import InputError
from bert_tf.io_utils import release_output_dir
from bert_tf.jobs import finetune

# Config fields `fit` sets itself, from its own arguments or the model.
_OWN = (
  "bert_config_file",
  "vocab_file",
  "do_lower_case",
  "spm_model_file",
  "init_checkpoint",
  "max_seq_length",
  "output_dir",
  "do_train",
  "do_eval",
  "do_predict",
  "train_records",
  "train_batch_size",
  "eval_batch_size",
  "predict_batch_size",
  "num_train_epochs",
  "learning_rate",
  "warmup_proportion",
  "progress",
  "dtype",
  "examples",
)
# Script flag -> fit argument, for messages in the API's words.
_ARGUMENTS = {
  "train_batch_size": "batch_size",
  "eval_batch_size": "batch_size",
  "predict_batch_size": "batch_size",
  "num_train_epochs": "epochs",
  "predict_file": "validation_data",
  "eval_every_epochs": "eval_every_epochs",
}


def _api_words(message):
  """A Job's message about flags, in fit's arguments (`--x=1` -> `x=1`)."""
  return re.sub(
    r"--(\w+)", lambda m: _ARGUMENTS.get(m.group(1), m.group(1)), message
  )


def _number(name, value, low, high=math.inf, integer=False):
  kind = (int, np.integer) if integer else (int, float, np.number)
  if isinstance(value, bool) or not isinstance(value, kind):
    raise InputError("%s=%r: not a number" % (name, value))
  if not (math.isfinite(value) and low <= value <= high):
    bound = "%s..%s" % (low, high) if math.isfinite(high) else ">= %s" % low
    raise InputError("%s=%r: must be %s" % (name, value, bound))


def _check_settings(config_cls, settings):
  """The other script settings fit takes, each of its field's type."""
  fields = config_cls.__dataclass_fields__
  for name, value in settings.items():
    if name not in fields or name in _OWN:
      raise InputError("fit: unknown argument %s" % name)
    hint = str(fields[name].type)
    if value is None:
      if "None" not in hint:
        raise InputError("%s=None: needs a value" % name)
      continue
    kind = fields[name].type if isinstance(fields[name].type, type) else None
    expected = kind or {"int": int, "float": float, "str": str}.get(
      hint.split(" |")[0]
    )
    if expected is bool and not isinstance(value, bool):
      raise InputError("%s=%r: must be True or False" % (name, value))
    if expected in (int, float):
      _number(name, value, -math.inf, integer=expected is int)
    if expected is str and not isinstance(value, str):
      raise InputError("%s=%r: must be a string" % (name, value))


def _logged(name):
  """The Keras log key of a Job metric: `val_` + its name without `eval_`."""
  return "val_" + name.removeprefix("eval_")


class _KerasCallbacks:
  """The Job's evaluations as Keras epochs: logs `loss` and `val_<metric>`
  to Keras callbacks (History and the progress lines included).

  The skeleton calls `begin` before training and the object after each
  evaluation (see `finetune.run`)."""

  def __init__(self, model, callbacks, verbose, epochs, validating, every):
    self.model = model
    self.callbacks = list(callbacks or ())
    self.verbose = verbose
    self.epochs = epochs
    self.validating = validating
    self.every = every  # eval_every_steps= given to fit, or None
    self.epoch = 0
    self.history = keras.callbacks.History()

  def begin(self, metric_names, num_steps):
    """Checks what the callbacks monitor; -> the evaluation cadence in
    steps: one evaluation per Keras epoch."""
    logged = {"loss"}
    if self.validating:
      logged.update(_logged(n) for n in metric_names if n != "loss")
    for callback in self.callbacks:
      monitor = getattr(callback, "monitor", None)
      if monitor is None:
        continue
      if monitor not in logged:
        raise InputError(
          "%s(monitor=%r): fit logs %s"
          % (type(callback).__name__, monitor, ", ".join(sorted(logged)))
        )
      # No compiled metrics tell Keras the direction: losses go down, the
      # scripts' other metrics (accuracy, F1, exact match, ...) up.
      if getattr(callback, "mode", None) == "auto":
        callback.mode = "min" if monitor.endswith("loss") else "max"
    every = self.every or max(1, math.ceil(num_steps / self.epochs))
    self.epochs = max(1, math.ceil(num_steps / every))
    self.model.stop_training = False
    self.list = keras.callbacks.CallbackList(
      self.callbacks + [self.history],
      add_progbar=self.verbose != 0,
      model=self.model,
      verbose=self.verbose,
      epochs=self.epochs,
      steps=every,
    )
    self.list.on_train_begin()
    self.list.on_epoch_begin(0)
    return every

  def __call__(self, trainer, metrics):
    logs = {}
    if trainer.last_loss is not None:  # None: evaluated before training
      logs["loss"] = float(trainer.last_loss)
    # eval_loss is Keras' val_loss (per example); the results' `loss` (a
    # mean of batch means) is not logged.
    logs.update(
      (_logged(name), float(value))
      for name, value in metrics.items()
      if isinstance(value, (int, float, np.number))
      and name not in ("global_step", "loss")
    )
    self.list.on_epoch_end(self.epoch, logs)
    self.epoch += 1
    if self.model.stop_training:
      return True
    if self.epoch < self.epochs:
      self.list.on_epoch_begin(self.epoch)
    return False

  def end(self):
    self.list.on_train_end()


def fit(
  api,
  data,
  epochs,
  batch_size,
  learning_rate,
  warmup_proportion,
  callbacks,
  verbose,
  output_dir,
  settings,
):
  """Trains `api`'s model on `data` ({split: the Job's in-memory data});
  -> a keras History. See `TaskApi.fit`."""
  _number("epochs", epochs, 0)
  _number("batch_size", batch_size, 1, integer=True)
  _number("learning_rate", learning_rate, 0)
  _number("warmup_proportion", warmup_proportion, 0, 1)
  _check_settings(api.CONFIG, settings)
  if verbose == "auto":
    verbose = 1 if sys.stdout.isatty() else 2
  if verbose not in (0, 1, 2):
    raise InputError("verbose=%r: must be 0, 1, 2 or 'auto'" % (verbose,))
  if not settings.get("eval_every_steps"):
    settings.setdefault("eval_every_epochs", 1.0)
  folder = output_dir or tempfile.mkdtemp(prefix="bert_tf_fit_")
  config = api.CONFIG(
    **api._job_settings(),
    vocab_file=api.vocab_file,
    do_lower_case=api.do_lower_case,
    max_seq_length=api.max_seq_length,
    output_dir=folder,
    do_train=True,
    train_batch_size=batch_size,
    eval_batch_size=batch_size,
    predict_batch_size=batch_size,
    num_train_epochs=float(epochs),
    learning_rate=float(learning_rate),
    warmup_proportion=float(warmup_proportion),
    progress=verbose == 1,
    dtype=keras.mixed_precision.global_policy().name,
    examples=data,
    **{"save_checkpoints_steps": 0, **settings},
  )
  listener = _KerasCallbacks(
    api.model,
    callbacks,
    verbose,
    max(1, math.ceil(epochs)),
    "dev" in data,
    settings.get("eval_every_steps"),
  )
  weights = [v.numpy() for v in api.model.weights]
  try:
    # A NaN loss ends training with an InputError (the Trainer's check).
    trainer, _ = finetune.run(
      api.JOB(config),
      finetune.Pretrained(api.config, api.tokenizer, api.model),
      listener,
    )
    listener.end()
  except InputError as e:
    _restore(api.model, weights)
    raise InputError(_api_words(str(e))) from None
  except BaseException:
    _restore(api.model, weights)
    raise
  finally:
    # Frozen layers (num_frozen_layers=, unfreeze_schedule=) train again.
    api.model.encoder.freeze_lowest_layers(0)
    release_output_dir(folder)
    if not output_dir:
      shutil.rmtree(folder, ignore_errors=True)
  api.global_step = trainer.global_step
  api._optimizer = trainer.optimizer
  api.training = {
    "learning_rate": learning_rate,
    "num_train_epochs": epochs,
    "train_batch_size": batch_size,
    "warmup_proportion": warmup_proportion,
  }
  return listener.history


def _restore(model, weights):
  for variable, value in zip(model.weights, weights):
    variable.assign(value)
