"""`TaskApi`: what the four task models of the Python API share.

A task model is an exporter of `bert_tf/export/` (its Keras model, in-graph
tokenizer and packing, raw-text serving function) plus the script's `Task`
(loss, metrics), so that `.predict` answers as the exported SavedModel,
`.fit` runs the task's Job as its script does (`api/fitting.py`: the
same featurizer, records, optimizer, schedule and evaluation, with Keras
callbacks), `.evaluate` gives the script's dev metrics, `.save_run` writes
a run folder the scripts resume and predict from (an engine checkpoint,
`bert_config.json`, `vocab.txt`, `run_config.json`), and `.export` writes
`export_saved_model`'s SavedModel.

A subclass names its exporter (`KIND`, also run_config.json's task) and
its Job (`JOB`, `CONFIG`), and says how its Python inputs become serving
inputs (`_inputs`), a split the Job reads (`_split_data`), features for
`evaluate` (`_features`: the scripts' data_prep featurizer, with
`tokenizer`), one input's result (`_result`: named values) and the raw
results (`_raw`: the SavedModel's), and metrics (`_metrics`: the scripts'
results code).
"""

import os
import shutil

import numpy as np
import tensorflow as tf

from bert_tf.api import fitting
from bert_tf.api import sources
from bert_tf.export import get_exporter
from bert_tf.io_utils import InputError
from bert_tf.io_utils import make_temp_dir
from bert_tf.runs import run_config
from bert_tf.tokenizers.loading import load_tokenizer
from bert_tf.training import checkpointing
from bert_tf.training import inference
from bert_tf.training import optimization

# The encoder's inputs, as every featurizer names them.
INPUTS = ("input_ids", "input_mask", "segment_ids")


class TaskApi:
  """A fine-tunable task model over raw text (see the subclasses)."""

  KIND = None
  # The task's Job and its config (`bert_tf.jobs`): what `fit` runs.
  JOB = None
  CONFIG = None
  DEFAULT_MAX_SEQ_LENGTH = 128

  def __init__(
    self, config, vocab_file, do_lower_case, max_seq_length, head, sequence=None
  ):
    self.config = config
    self.vocab_file = vocab_file
    self.do_lower_case = do_lower_case
    self.max_seq_length = max_seq_length
    self.head = head
    self.sequence = dict(sequence or {})
    self.exporter = get_exporter(self.KIND)(
      config, vocab_file, do_lower_case, max_seq_length, self._options()
    )
    self.task = self._task()
    self.global_step = 0
    self.training = {}
    self._optimizer = None
    self._inference_fns = {}
    self._signature = None
    self._tokenizer = None

  @property
  def model(self):
    """The Keras task model (encoder + head)."""
    return self.exporter.model

  @property
  def tokenizer(self):
    """The scripts' WordPiece tokenizer: data_prep featurizes with it."""
    if self._tokenizer is None:
      self._tokenizer = load_tokenizer(self.vocab_file, self.do_lower_case)
    return self._tokenizer

  @classmethod
  def from_pretrained(
    cls,
    path_or_name,
    max_seq_length=None,
    do_lower_case=None,
    vocab_file=None,
    cache_dir=None,
    **head,
  ):
    """The task model on a pre-trained (or fine-tuned) model.

    Args:
      path_or_name: an original-layout folder, a HuggingFace folder, a run
        folder, or a model name (see `bert_tf.api.sources`).
      max_seq_length: sequence length (default: the run's, else 128; 384
        for SQuAD).
      do_lower_case: default: the run's or the HF tokenizer's, else True.
      vocab_file: instead of the folder's vocab.txt.
      cache_dir: where model names are downloaded to.
      **head: the task head's settings (e.g. `num_labels=`).
    """
    source = sources.resolve(path_or_name, vocab_file, do_lower_case, cache_dir)
    recorded = source.recorded
    if recorded is not None and recorded.task != cls.KIND:
      raise InputError(
        "%s: a %s run, not %s" % (path_or_name, recorded.task, cls.KIND)
      )
    head, sequence = cls._settings(head, recorded)
    length = max_seq_length or (
      recorded.max_seq_length if recorded else cls.DEFAULT_MAX_SEQ_LENGTH
    )
    model = cls(
      source.config,
      source.vocab_file,
      source.do_lower_case,
      length,
      head,
      sequence,
    )
    # A run's step: evaluate reports it, save_run continues it.
    model.global_step = source.load(model.exporter) or 0
    return model

  # --- What a task provides. ----------------------------------------------

  @classmethod
  def _settings(cls, given, recorded):
    """(head, sequence settings) from the user's arguments and a run's
    recorded RunConfig (None); a contradiction is an InputError."""
    raise NotImplementedError

  def _options(self):
    """The exporter's options."""
    raise NotImplementedError

  def _task(self):
    """The script's Task."""
    raise NotImplementedError

  def _inputs(self, x):
    """{serving input name: numpy strings} of the user's inputs."""
    raise NotImplementedError

  def _split_data(self, x, y):
    """Labelled inputs as the task's Job reads a split in memory (its
    `from_data`): e.g. run_classifier.py's InputExamples."""
    raise NotImplementedError

  def _job_settings(self):
    """The task's own fields of its Job config (`CONFIG`) for this model."""
    return {}

  def _features(self, x, y):
    """{feature: numpy array} of labelled examples, as the Task reads."""
    raise NotImplementedError

  def _serving(self, names):
    """(serving function, {input name: shape}) for inputs `names`."""
    known = self.exporter.input_shapes()
    return self.exporter.serve, {n: known.get(n, [None]) for n in names}

  def _result(self, row):
    """One input's serving outputs ({name: numpy value}) -> its result."""
    raise NotImplementedError

  def _raw(self, rows):
    """Every input's serving outputs -> what `predict(raw=True)` returns."""
    raise NotImplementedError

  def _metrics(self, rows, batch_size):
    """{metric: value} of the model's rows of labelled examples."""
    raise NotImplementedError

  # --- Training, evaluation, prediction. ----------------------------------

  def fit(
    self,
    x,
    y,
    validation_data=None,
    epochs=3.0,
    batch_size=32,
    learning_rate=5e-5,
    warmup_proportion=0.1,
    callbacks=None,
    verbose="auto",
    output_dir=None,
    **settings,
  ):
    """Fine-tunes on `x`, `y` as the task's script does (its Job: the same
    featurizer, windows, optimizer and schedule); -> keras History.

    Args:
      x, y: the training inputs and labels (as `evaluate` takes them).
      validation_data: (x, y) evaluated every epoch with the script's dev
        metrics, logged as `val_<metric>` (e.g. val_accuracy, val_f1).
      epochs, batch_size, learning_rate, warmup_proportion: the script's
        --num_train_epochs, --train_batch_size, --learning_rate,
        --warmup_proportion.
      callbacks: Keras callbacks (EarlyStopping, ModelCheckpoint,
        TensorBoard, ...), called at the end of each epoch.
      verbose: 0 silent, 1 progress bar, 2 one line per epoch; "auto": 1 in
        a terminal, else 2.
      output_dir: keep the run folder there (locked while training; resumed
        if it holds this model's run, as a script's --output_dir); default:
        a temporary folder, removed afterwards.
      **settings: any other setting of the script, by its flag's name:
        num_frozen_layers, unfreeze_schedule, eval_every_steps,
        best_metric, early_stopping_patience, seed, optimizer,
        gradient_accumulation_steps, ...

    Each call is one run of the schedule (warmup and decay over its own
    steps, fresh Adam slots). A refused or diverging call leaves the
    model's weights unchanged. `seed=` fixes what training draws (batch
    order); the new head and the dropout seeds are drawn when the model is
    built: `keras.utils.set_random_seed(seed)` before `from_pretrained`
    makes the run the script's `--seed` run, bit for bit.
    """
    data = {"train": self._split_data(x, y)}
    if validation_data is not None:
      if not isinstance(validation_data, (tuple, list)) or (
        len(validation_data) != 2
      ):
        raise InputError("validation_data: an (x, y) pair")
      try:
        data["dev"] = self._split_data(*validation_data)
      except InputError as e:
        raise InputError("validation_data: %s" % e) from None
    return fitting.fit(
      self,
      data,
      epochs,
      batch_size,
      learning_rate,
      warmup_proportion,
      callbacks,
      verbose,
      output_dir,
      settings,
    )

  def _rows(self, features, batch_size, keys):
    """The model's outputs (+ the features `keys`) per example, in order."""
    dataset = tf.data.Dataset.from_tensor_slices(features).batch(batch_size)

    def fn(batch, outputs):
      return dict(outputs, **{k: batch[k] for k in keys})

    rows = []
    for batch in inference.real_rows(
      tf.distribute.get_strategy(),
      self.model,
      dataset,
      batch_size,
      fn,
      self._inference_fns,
      ("rows",) + tuple(keys),
    ):
      rows.extend(
        {k: v[i] for k, v in batch.items()}
        for i in range(len(next(iter(batch.values()))))
      )
    return rows

  def evaluate(self, x, y, batch_size=8):
    """The scripts' dev metrics ({name: value}, as eval_results.txt)."""
    return self._metrics(
      self._rows(self._features(x, y), batch_size, self.task.predict_keys),
      batch_size,
    )

  def predict(self, x, batch_size=32, raw=False):
    """One result per input, in order: a dict of named, JSON-ready values
    (the subclass says which); `raw=True`: what the exported SavedModel
    answers (probability arrays, answer strings, tag lists). Every input is
    checked before the model runs; a bad one is named by its index."""
    if isinstance(batch_size, bool) or not isinstance(
      batch_size, (int, np.integer)
    ):
      raise InputError("batch_size=%r: not an integer" % (batch_size,))
    if batch_size < 1:
      raise InputError("batch_size=%d: must be >= 1" % batch_size)
    if not isinstance(raw, bool):
      raise InputError("raw=%r: must be True or False" % (raw,))
    inputs = self._inputs(x)
    names = tuple(inputs)
    if self._signature is None or self._signature[0] != names:
      self._signature = names, self.exporter.signature(*self._serving(names))
    serve = self._signature[1]
    total = len(inputs[names[0]])
    rows = []
    for start in range(0, total, batch_size):
      outputs = serve(
        **{
          n: tf.constant(v[start : start + batch_size], _dtype(v))
          for n, v in inputs.items()
        }
      )
      outputs = {k: v.numpy() for k, v in outputs.items()}
      rows.extend(
        {k: v[i] for k, v in outputs.items()}
        for i in range(min(batch_size, total - start))
      )
    if raw:
      return self._raw(rows)
    return [self._result(row) for row in rows]

  # --- Run folders and SavedModels. ---------------------------------------

  def run_settings(self):
    """This model's `run_config.RunConfig` (its vocabulary is copied into
    the run folder)."""
    return run_config.RunConfig(
      self.KIND,
      self.head,
      run_config.tokenizer_settings(self.vocab_file, self.do_lower_case, None),
      self.max_seq_length,
      self.config.to_dict(),
      self.sequence,
      self.training,
    )

  def save_run(self, run_dir):
    """Writes a new run folder: the engine checkpoint the scripts resume
    and predict from, bert_config.json, vocab.txt and run_config.json."""
    if os.path.exists(run_dir):
      raise InputError(
        "%s already exists (a run is never overwritten)" % run_dir
      )
    tmp_dir = make_temp_dir(os.path.dirname(os.path.abspath(run_dir)), ".run-")
    try:
      optimizer = self._optimizer
      if optimizer is None:  # as a predicting script builds it
        optimizer = optimization.create_optimizer(5e-5, 1, 0)
        optimizer.build(self.model.trainable_variables)
      checkpoint = checkpointing.model_checkpoint(self.model, optimizer)
      tf.train.CheckpointManager(
        checkpoint, tmp_dir, max_to_keep=1, checkpoint_name="ckpt"
      ).save(checkpoint_number=self.global_step)
      # With its own vocab.txt and bert_config.json: the folder moves.
      run_config.check_or_write(tmp_dir, self.run_settings())
      os.replace(tmp_dir, run_dir)
    finally:
      shutil.rmtree(tmp_dir, ignore_errors=True)
    return run_dir

  def export(self, export_dir):
    """Writes `export_saved_model`'s raw-text SavedModel of this model."""
    return self.exporter.save(export_dir)


def _dtype(values):
  # An object array of texts (even an empty one) is a string tensor.
  return tf.string if values.dtype == object else None


def stacked(rows, names, dtype=np.int32, **renamed):
  """{name: numpy array of each featurized row's `name`} for `names`, and
  {feature: array of its attribute} for `renamed` (feature=attribute)."""
  fields = dict({n: n for n in names}, **renamed)
  return {
    feature: np.array([getattr(r, attr) for r in rows], dtype)
    for feature, attr in fields.items()
  }
