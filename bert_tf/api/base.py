"""`TaskApi`: what the four task models of the Python API share.

A task model is an exporter of `bert_tf/export/` (its Keras model, in-graph
tokenizer and packing, raw-text serving function) plus the script's `Task`
(loss, metrics), so that `.predict` answers as the exported SavedModel,
`.fit` trains as the scripts do (`Trainer`, the original AdamWeightDecay
with warmup and linear decay, batches drawn as the original's
`repeat().shuffle(100).batch(drop_remainder=True)`), `.save_run` writes a
run folder the scripts resume and predict from (an engine checkpoint,
`bert_config.json`, `vocab.txt`, `run_config.json`), and `.export` writes
`export_saved_model`'s SavedModel.

A subclass names its exporter (`KIND`, also run_config.json's task) and
says how its Python inputs become serving inputs (`_inputs`), training
features (`_features`: the scripts' data_prep featurizer, with `tokenizer`),
results (`_results`) and metrics (`_metrics`: the scripts' results code).
"""

import os
import shutil
import tempfile

import numpy as np
import tensorflow as tf

from bert_tf.api import sources
from bert_tf.export import get_exporter
from bert_tf.io_utils import InputError
from bert_tf.io_utils import make_temp_dir
from bert_tf.jobs import wiring
from bert_tf.tokenizers.loading import load_tokenizer
from bert_tf.training import checkpointing
from bert_tf.training import inference
from bert_tf.training import optimization
from bert_tf.training import run_config
from bert_tf.training.trainer import Trainer

_SHUFFLE_BUFFER = 100  # the original's training input
# The encoder's inputs, as every featurizer names them.
INPUTS = ("input_ids", "input_mask", "segment_ids")


class TaskApi:
  """A fine-tunable task model over raw text (see the subclasses)."""

  KIND = None
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
    # The Trainer trains the exporter's model: one model for all uses.
    self.task.build_model = lambda: self.exporter.model
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
    source.load(model.exporter)
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

  def _features(self, x, y):
    """{feature: numpy array} of labelled examples, as the Task reads."""
    raise NotImplementedError

  def _serving(self, names):
    """(serving function, {input name: shape}) for inputs `names`."""
    known = self.exporter.input_shapes()
    return self.exporter.serve, {n: known.get(n, [None]) for n in names}

  def _results(self, outputs):
    """Serving outputs (numpy) -> what `predict` returns."""
    raise NotImplementedError

  def _metrics(self, rows, batch_size):
    """{metric: value} of the model's rows of labelled examples."""
    raise NotImplementedError

  # --- Training, evaluation, prediction. ----------------------------------

  def fit(
    self,
    x,
    y,
    epochs=3.0,
    batch_size=32,
    learning_rate=5e-5,
    warmup_proportion=0.1,
    output_dir=None,
    progress=True,
  ):
    """Fine-tunes on `x`, `y` as the training scripts do; -> the Trainer's
    stats per host loop. Each call is one run of the schedule (warmup and
    decay over its own steps, fresh Adam slots). `output_dir`: keep the
    run's checkpoints there (resumed if it holds them, as a script's
    --output_dir); default: a temporary folder, removed afterwards."""
    features = self._features(x, y)
    count = len(next(iter(features.values())))
    num_steps, num_warmup = wiring.train_steps(
      count, batch_size, epochs, warmup_proportion
    )
    folder = output_dir or tempfile.mkdtemp(prefix="bert_tf_fit_")
    trainer = Trainer(
      self.task,
      lambda: optimization.create_optimizer(
        learning_rate, num_steps, num_warmup
      ),
      folder,
      progress=progress,
      save_checkpoints_steps=0,
    )

    def dataset_fn(ctx):
      del ctx  # one input pipeline
      return (
        tf.data.Dataset.from_tensor_slices(features)
        .repeat()
        .shuffle(_SHUFFLE_BUFFER)
        .batch(batch_size, drop_remainder=True)
      )

    try:
      history = trainer.train(dataset_fn, num_steps)
    finally:
      if not output_dir:
        shutil.rmtree(folder, ignore_errors=True)
    self.global_step = trainer.global_step
    self._optimizer = trainer.optimizer
    self.training = {
      "learning_rate": learning_rate,
      "num_train_epochs": epochs,
      "train_batch_size": batch_size,
      "warmup_proportion": warmup_proportion,
    }
    return history

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

  def predict(self, x, batch_size=32):
    """One result per input, in order, as the exported SavedModel answers."""
    inputs = self._inputs(x)
    names = tuple(inputs)
    if self._signature is None or self._signature[0] != names:
      self._signature = names, self.exporter.signature(*self._serving(names))
    serve = self._signature[1]
    total = len(inputs[names[0]])
    parts = []
    for start in range(0, total, batch_size):
      outputs = serve(
        **{
          n: tf.constant(v[start : start + batch_size])
          for n, v in inputs.items()
        }
      )
      parts.append({k: v.numpy() for k, v in outputs.items()})
    return self._results(parts)

  # --- Run folders and SavedModels. ---------------------------------------

  def run_settings(self):
    """This model's `run_config.RunConfig` (vocab path: the run's copy)."""
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
      with open(os.path.join(tmp_dir, "bert_config.json"), "w") as f:
        f.write(self.config.to_json_string())
      shutil.copyfile(self.vocab_file, os.path.join(tmp_dir, "vocab.txt"))
      settings = self.run_settings()
      settings.tokenizer["vocab_file"] = os.path.join(
        os.path.abspath(run_dir), "vocab.txt"
      )
      run_config.check_or_write(tmp_dir, settings)
      os.replace(tmp_dir, run_dir)
    finally:
      shutil.rmtree(tmp_dir, ignore_errors=True)
    return run_dir

  def export(self, export_dir):
    """Writes `export_saved_model`'s raw-text SavedModel of this model."""
    return self.exporter.save(export_dir)


def strings(values, what):
  """A list of texts as a numpy string array; InputError otherwise."""
  if isinstance(values, (str, bytes)):
    raise InputError("%s: a list of texts, not one text" % what)
  values = list(values)
  if not values:
    raise InputError("%s: no texts" % what)
  bad = [v for v in values if not isinstance(v, (str, bytes))]
  if bad:
    raise InputError("%s: texts must be strings, got %r" % (what, bad[0]))
  return np.array(values, dtype=object)


def stacked(rows, names, dtype=np.int32, **renamed):
  """{name: numpy array of each featurized row's `name`} for `names`, and
  {feature: array of its attribute} for `renamed` (feature=attribute)."""
  fields = dict({n: n for n in names}, **renamed)
  return {
    feature: np.array([getattr(r, attr) for r in rows], dtype)
    for feature, attr in fields.items()
  }
