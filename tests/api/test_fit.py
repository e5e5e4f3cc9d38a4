"""`fit` as a Keras user expects it, running the script's Job: validation
every epoch with the script's metrics, Keras callbacks (EarlyStopping
stops, History back), one line per epoch with verbose=2, the script's
freezing, the run lock, and all-or-nothing calls (a refused or diverging fit
leaves the weights as they were), on the tiny fixture model."""

import contextlib
import io
import subprocess
import sys

import keras
import numpy as np
import pytest

import bert_tf
from bert_tf.io_utils import InputError
from bert_tf.io_utils import LOCK_FILE
from tests.helpers.processes import ENV
from tests.helpers.processes import REPO

pytestmark = pytest.mark.process  # fine-tunes

_PAIRS = [
  ("the cat sat", "the cat sat"),
  ("he went home", "stocks fell"),
  ("it rains", "it rains"),
  ("red car", "blue sky"),
] * 4
_LABELS = ["1", "0", "1", "0"] * 4


def _model(folder):
  keras.utils.set_random_seed(1)
  return bert_tf.TextClassifier.from_pretrained(
    folder, num_labels=2, max_seq_length=16
  )


def _weights(clf):
  return [v.numpy().copy() for v in clf.model.weights]


def _same(before, after):
  return all(np.array_equal(a, b) for a, b in zip(before, after))


def test_validation_callbacks_and_epoch_lines(tiny_folder):
  clf = _model(tiny_folder)
  out = io.StringIO()
  # val_accuracy cannot improve on 1.0: patience 1 stops after epoch 2
  # once the model has learnt the pairs, and never before epoch 2.
  stop = keras.callbacks.EarlyStopping(
    monitor="val_loss", patience=1, min_delta=10.0
  )
  with contextlib.redirect_stdout(out):
    history = clf.fit(
      _PAIRS,
      _LABELS,
      validation_data=(_PAIRS[:10], _LABELS[:10]),  # a partial batch
      epochs=6,
      batch_size=4,
      learning_rate=1e-3,
      callbacks=[stop],
      verbose=2,
    )
  # min_delta=10: no epoch improves on the first, so patience 1 stops
  # after the second.
  assert history.epoch == [0, 1]
  assert stop.stopped_epoch == 1
  assert set(history.history) >= {"loss", "val_loss", "val_accuracy"}
  # The script's dev metrics of the weights after each epoch: the last
  # equals evaluate's.
  final = clf.evaluate(_PAIRS[:10], _LABELS[:10])
  assert history.history["val_accuracy"][-1] == pytest.approx(
    final["eval_accuracy"]
  )
  # val_loss is the per-example dev loss (eval_loss), as Keras means it.
  assert history.history["val_loss"][-1] == pytest.approx(
    final["eval_loss"], rel=1e-5
  )
  lines = out.getvalue().splitlines()
  assert lines[0] == "Epoch 1/6"
  assert "loss:" in lines[1] and "val_accuracy:" in lines[1]
  assert len(lines) == 4  # two epochs, a header and a line each
  # 8 steps trained: 2 epochs of 16 examples / 4.
  assert clf.global_step == 8


def test_epochs_are_keras_epochs_and_monitors_are_checked(tiny_folder):
  clf = _model(tiny_folder)
  # 18 examples / batch 4: 4.5 steps an epoch, 9 steps in all; two epochs.
  x, y = _PAIRS + _PAIRS[:2], _LABELS + _LABELS[:2]
  stop = keras.callbacks.EarlyStopping(monitor="val_accuracy", patience=5)
  history = clf.fit(
    x,
    y,
    validation_data=(_PAIRS[:4], _LABELS[:4]),
    epochs=2,
    batch_size=4,
    callbacks=[stop],
    verbose=0,
  )
  assert history.epoch == [0, 1] and clf.global_step == 9
  assert stop.mode == "max"  # no compiled metric tells Keras: accuracy up
  before = _weights(clf)
  with pytest.raises(
    InputError,
    match=r"^EarlyStopping\(monitor='val_acc'\): fit logs loss, "
    "val_accuracy, val_loss$",
  ):
    clf.fit(
      x,
      y,
      validation_data=(_PAIRS[:4], _LABELS[:4]),
      callbacks=[keras.callbacks.EarlyStopping(monitor="val_acc")],
      verbose=0,
    )
  assert _same(before, _weights(clf))


def test_frozen_layers_do_not_move_and_train_again_afterwards(tiny_folder):
  clf = _model(tiny_folder)
  encoder = clf.model.encoder
  frozen = [v.numpy().copy() for v in encoder.embeddings.weights]
  frozen += [v.numpy().copy() for v in encoder.blocks[0].weights]
  head = [v.numpy().copy() for v in clf.model.weights[-2:]]
  clf.fit(
    _PAIRS,
    _LABELS,
    epochs=1,
    batch_size=4,
    learning_rate=1e-3,
    num_frozen_layers=1,
    verbose=0,
  )
  after = [v.numpy() for v in encoder.embeddings.weights]
  after += [v.numpy() for v in encoder.blocks[0].weights]
  assert _same(frozen, after)
  assert not _same(head, [v.numpy() for v in clf.model.weights[-2:]])
  assert encoder.embeddings.trainable and encoder.blocks[0].trainable


@pytest.mark.parametrize(
  "arguments, message",
  [
    ({"learning_rate": float("nan")}, "learning_rate=nan: must be >= 0"),
    ({"learning_rate": -1e-3}, "learning_rate=-0.001: must be >= 0"),
    ({"batch_size": 0}, "batch_size=0: must be >= 1"),
    ({"epochs": float("inf")}, "epochs=inf: must be >= 0"),
    ({"warmup_proportion": 2.0}, "warmup_proportion=2.0: must be 0..1"),
    ({"num_frozen_layers": 5}, "num_frozen_layers=5: must be between 0"),
    ({"eval_every_epochs": "1"}, "eval_every_epochs='1': not a number"),
    ({"progress": False}, "fit: unknown argument progress"),
    ({"best_metric": "eval_f1"}, "best_metric=eval_f1: not an evaluation"),
  ],
)
def test_refused_calls_change_nothing(tiny_folder, arguments, message):
  clf = _model(tiny_folder)
  before = _weights(clf)
  settings = dict(epochs=1, batch_size=4, verbose=0)
  settings.update(arguments)
  with pytest.raises(InputError, match="^" + message.replace("(", r"\(")):
    clf.fit(_PAIRS, _LABELS, **settings)
  assert _same(before, _weights(clf))
  assert clf.global_step == 0


def test_a_diverging_fit_restores_the_weights(tiny_folder):
  clf = _model(tiny_folder)
  before = _weights(clf)
  with pytest.raises(InputError, match="training loss is nan .* learning_rate"):
    clf.fit(_PAIRS, _LABELS, epochs=2, batch_size=4, learning_rate=1e30)
  assert _same(before, _weights(clf))
  assert np.isfinite(clf.predict(_PAIRS[:2], raw=True)).all()


def test_fit_takes_the_run_lock(tiny_folder, tmp_path):
  run = tmp_path / "run"
  holder = subprocess.Popen(
    [
      sys.executable,
      "-c",
      "import sys, time; from bert_tf.io_utils import make_output_dir; "
      "make_output_dir(sys.argv[1]); print('locked', flush=True); "
      "time.sleep(60)",
      str(run),
    ],
    cwd=REPO,
    env=ENV,
    stdout=subprocess.PIPE,
    text=True,
  )
  try:
    assert holder.stdout.readline().strip() == "locked"
    clf = _model(tiny_folder)
    with pytest.raises(InputError, match="output_dir=%s is in use" % run):
      clf.fit(_PAIRS, _LABELS, epochs=1, batch_size=4, output_dir=str(run))
    assert [p.name for p in run.iterdir()] == [LOCK_FILE]
  finally:
    holder.kill()
    holder.wait()
