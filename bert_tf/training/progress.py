"""Live progress of training, evaluation and prediction.

A host loop of `--iterations_per_loop` steps (default 1000, a TPU setting)
showed nothing for minutes off TPU: `HostLoopPacer` splits each loop into
calls of the traced loop that take about `target_seconds`, so the bar moves
every few seconds (on one host; TPUs and multi-worker runs keep whole
loops). A call costs one host round trip (microseconds next to
a step), and the loop's boundaries — checkpoints, evaluation, the logged and
TensorBoard statistics — stay where they were. `Progress` is the tqdm bar on
a terminal and, when stderr is not one (a log file, a pipe), one log line
at least every `log_seconds`: steps, loss, examples/s and the ETA.
`write_scalars` writes the TensorBoard statistics of training and
evaluation with the core `tf.summary.write` op and the scalar plugin's tag,
so that the `tensorboard` package is not needed at training time.

Example:
    pacer = HostLoopPacer(whole_loops=False)
    with Progress(num_steps, initial=step, desc="train") as progress:
      n = pacer.size(remaining)
      start = time.time()
      loss, examples = train_loop(iterator, n)
      pacer.record(n, time.time() - start)
      progress.update(n, loss=loss, examples=examples)
    with tf.summary.create_file_writer("out").as_default():
      write_scalars({"loss": 0.61, "learning_rate": 5e-5}, step=100)
"""

import time

from absl import logging
import tensorflow as tf
from tensorflow.core.framework import summary_pb2
import tqdm

LOG_SECONDS = 30.0
_SCALAR_METADATA = summary_pb2.SummaryMetadata(
  plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="scalars")
)


def write_scalars(scalars, step):
  """Writes {tag: number} as TensorBoard scalars to the default writer."""
  for name, value in scalars.items():
    tf.summary.write(
      name, tf.constant(value, tf.float32), step=step, metadata=_SCALAR_METADATA
    )


class HostLoopPacer:
  """The number of steps of the next call of the traced training loop."""

  def __init__(self, whole_loops, target_seconds=2.0):
    # On TPU a call is an infeed/outfeed round trip, and workers of a
    # multi-worker strategy must cut their loops alike: whole loops there.
    self._target = None if whole_loops else target_seconds
    self._size = 1  # The first call traces: time one step after it.
    self._calls = 0

  def size(self, remaining):
    """Steps for the next call: at most `remaining` (the loop's rest)."""
    return remaining if self._target is None else min(self._size, remaining)

  def record(self, steps, seconds):
    """The time a call of `steps` steps took."""
    self._calls += 1
    if self._target is None or self._calls == 1 or seconds <= 0:
      return
    fit = int(self._target * steps / seconds)
    self._size = max(1, min(fit, 2 * self._size))  # Grow at most 2x a call.


def _duration(seconds):
  minutes, seconds = divmod(int(seconds), 60)
  hours, minutes = divmod(minutes, 60)
  return "%d:%02d:%02d" % (hours, minutes, seconds)


class Progress:
  """A tqdm bar, or (stderr not a terminal) a log line every `log_seconds`.

  Args:
    total: steps or batches to come in all (None: unknown).
    initial: already done (a resumed run's step).
    desc: what runs ("train", "evaluate", "predict").
    unit: "step" or "batch".
    enabled: False: neither bar nor lines (e.g. not the chief).
    log_seconds: the longest silence when there is no bar.
  """

  def __init__(
    self,
    total,
    initial=0,
    desc=None,
    unit="step",
    enabled=True,
    log_seconds=LOG_SECONDS,
  ):
    self.bar = tqdm.tqdm(
      total=total,
      initial=initial,
      desc=desc,
      unit=unit,
      disable=None if enabled else True,
    )
    self._log = enabled and self.bar.disable
    self._desc, self._unit, self._total = desc, unit, total
    self._done = initial
    self._start_done, self._start = initial, time.time()
    self._log_seconds = log_seconds
    self._logged = self._start
    self._examples = 0
    self._baseline = True

  def __enter__(self):
    return self

  def __exit__(self, *exc):
    self.bar.close()

  def logged(self):
    """Call when the caller has just logged its own progress line."""
    self._logged = time.time()

  def update(self, n, loss=None, examples=None):
    """`n` more done; `loss` (of these) and `examples` for the line."""
    self._done += n
    self.bar.update(n)
    now = time.time()
    if self._baseline:  # The first call traces: rates count from its end.
      self._baseline = False
      self._start_done, self._start = self._done, now
    else:
      self._examples += examples or 0
    postfix = {}
    if loss is not None:
      postfix["loss"] = "%.4f" % loss
    if self._examples:
      postfix["ex_per_s"] = "%.1f" % (
        self._examples / max(now - self._start, 1e-9)
      )
    if postfix:
      self.bar.set_postfix(postfix, refresh=False)
    if self._log and now - self._logged >= self._log_seconds:
      self._logged = now
      logging.info("%s", self.line(now, loss))

  def line(self, now, loss=None):
    """`train: step 40/100, loss = 0.61, 16.2 examples/s, ETA 0:01:12`."""
    seconds = max(now - self._start, 1e-9)
    rate = (self._done - self._start_done) / seconds
    parts = [
      "%s: %s %d%s"
      % (
        self._desc,
        self._unit,
        self._done,
        "/%d" % self._total if self._total else "",
      )
    ]
    if loss is not None:
      parts.append("loss = %.5f" % loss)
    if self._examples:
      parts.append("%.1f examples/s" % (self._examples / seconds))
    elif rate > 0:
      parts.append("%.2f %s/s" % (rate, self._unit))
    if self._total and rate > 0:
      parts.append("ETA %s" % _duration((self._total - self._done) / rate))
    return ", ".join(parts)
