"""Every Task in bert_tf/tasks on a tiny hand-made batch shaped by its own
`feature_spec`: the model runs, loss and metrics are finite, and with its
heads' output weights at zero (all logits 0) the loss is the hand-derived
value of uniform predictions, e.g. log(num_classes).

A new Task subclass fails `test_every_task_is_covered` until it gets a line
in `_TASKS`.
"""

import importlib
import math
import pkgutil

import numpy as np
import pytest
import tensorflow as tf

from bert_tf import tasks as tasks_package
from bert_tf.tasks.base import Task
from bert_tf.tasks.classification import ClassificationTask
from bert_tf.tasks.multiple_choice import MultipleChoiceTask
from bert_tf.tasks.ner import NerTask
from bert_tf.tasks.pretraining import PretrainingTask
from bert_tf.tasks.squad import SquadTask
from tests.helpers.checkpoints import config_of

CONFIG = config_of("ckpt_b")  # 1 layer, H=32, vocabulary 3000
V = CONFIG.vocab_size
B, S, P, K, C = 3, 8, 4, 5, 4
# masked_lm_weights of each row: two real predictions, two padding.
_MLM_WEIGHTS = [1.0, 1.0, 0.0, 0.0]
_MLM_REAL = B * sum(_MLM_WEIGHTS)
# Uniform masked LM (sum(w) / (sum(w) + 1e-5) of ln V: the original's
# epsilon) plus uniform NSP.
_PRETRAINING_ZERO_LOSS = math.log(V) * _MLM_REAL / (
  _MLM_REAL + 1e-5
) + math.log(2)

# case -> (Task, its loss when every logit is 0 as a function of the batch,
# derived by hand: uniform predictions cost ln(number of classes)).
_TASKS = {
  "classification": (ClassificationTask(CONFIG, K, S), lambda b: math.log(K)),
  # Squared error of the score 0: the mean squared label.
  "regression": (
    ClassificationTask(CONFIG, 1, S),
    lambda b: float(np.mean(np.square(b["label_ids"]))),
  ),
  # Sigmoid cross-entropy of logit 0: ln 2 whatever the label.
  "multi_label": (
    ClassificationTask(CONFIG, K, S, multi_label=True),
    lambda b: math.log(2),
  ),
  "multiple_choice": (MultipleChoiceTask(CONFIG, C, S), lambda b: math.log(C)),
  "tagging": (NerTask(CONFIG, K, S), lambda b: math.log(K)),
  "squad": (SquadTask(CONFIG, S), lambda b: math.log(S)),
  "pretraining": (
    PretrainingTask(CONFIG, S, P),
    lambda b: _PRETRAINING_ZERO_LOSS,
  ),
}


def _value(name, shape, dtype, rng, case):
  """A valid value of feature `name` for `case`'s task."""
  if name == "input_ids":
    return rng.randint(1, V, shape)
  if name == "input_mask":
    return np.ones(shape)
  if name in ("segment_ids", "is_impossible"):
    return np.zeros(shape)
  if name == "label_ids":
    if dtype == tf.float32:
      return rng.uniform(0, 5, shape)  # an STS-B-like score
    return rng.randint(
      0,
      2 if case == "multi_label" else C if case == "multiple_choice" else K,
      shape,
    )
  if name == "label_weights":
    return (np.arange(S) % 3 != 0) * np.ones(shape)  # some pieces unscored
  if name in ("start_positions", "end_positions", "masked_lm_positions"):
    return rng.randint(0, S, shape)
  if name == "masked_lm_ids":
    return rng.randint(1, V, shape)
  if name == "masked_lm_weights":
    return np.tile(_MLM_WEIGHTS, (B, 1))
  if name == "next_sentence_labels":
    return rng.randint(0, 2, shape)
  if name == "unique_ids":
    return 1000000000 + np.arange(B).reshape(shape)
  if name == "is_real_example":
    return np.ones(shape)
  raise AssertionError("no test value for feature %r" % name)


def _batch(task, case):
  """A batch of B records as the input pipeline yields them (int32)."""
  rng = np.random.RandomState(0)
  batch = {}
  for name, feature in task.feature_spec(True).items():
    shape = [B] + list(feature.shape)
    value = _value(name, shape, feature.dtype, rng, case)
    batch[name] = tf.constant(
      value, tf.float32 if feature.dtype == tf.float32 else tf.int32
    )
  return batch


def _zero_heads(model):
  """Every head weight 0, so all logits are 0 (the masked-LM transform's
  LayerNorm then outputs 0, whatever the tied word embeddings)."""
  for head in model.heads().values():
    for variable in head.tf1_variables().values():
      variable.assign(tf.zeros_like(variable))


def _task_classes():
  for module in pkgutil.iter_modules(tasks_package.__path__):
    importlib.import_module("bert_tf.tasks." + module.name)
  pending, found = [Task], set()
  while pending:
    for sub in pending.pop().__subclasses__():
      if sub.__module__.startswith("bert_tf.tasks.") and sub not in found:
        found.add(sub)
        pending.append(sub)
  return found


def test_every_task_is_covered():
  assert _task_classes() == {type(task) for task, _ in _TASKS.values()}


@pytest.mark.parametrize("case", sorted(_TASKS))
def test_loss_and_metrics_on_a_tiny_batch(case):
  task, zero_loss = _TASKS[case]
  model = task.build_model()
  batch = _batch(task, case)
  outputs = model(batch, training=False)
  loss = float(task.loss(batch, outputs))
  assert math.isfinite(loss) and loss > 0, loss
  metrics = task.metrics(batch, outputs) or {}
  for name, (numerator, denominator) in metrics.items():
    assert numerator.shape == denominator.shape == (B,), name
    assert np.all(np.isfinite(numerator)) and np.all(
      np.asarray(denominator) >= 0
    ), name
  assert set(task.predict_keys) <= set(batch) | set(task.feature_spec(False))

  _zero_heads(model)
  outputs = model(batch, training=False)
  assert float(task.loss(batch, outputs)) == pytest.approx(
    zero_loss(batch), rel=1e-5
  )


def test_pretraining_metrics_at_zero_logits():
  task, _ = _TASKS["pretraining"]
  model = task.build_model()
  batch = _batch(task, "pretraining")
  _zero_heads(model)
  metrics = task.metrics(batch, model(batch, training=False))
  value = {
    name: float(tf.reduce_sum(n) / tf.reduce_sum(d))
    for name, (n, d) in metrics.items()
  }
  assert value["masked_lm_loss"] == pytest.approx(math.log(V), rel=1e-5)
  assert value["next_sentence_loss"] == pytest.approx(math.log(2), rel=1e-5)
  assert value["loss"] == pytest.approx(_PRETRAINING_ZERO_LOSS, rel=1e-5)
  # Ties break to class 0: no masked word (ids >= 1) is right, and NSP
  # accuracy is the share of labels that are 0.
  assert value["masked_lm_accuracy"] == 0
  labels = batch["next_sentence_labels"].numpy().ravel()
  assert value["next_sentence_accuracy"] == pytest.approx(np.mean(labels == 0))
