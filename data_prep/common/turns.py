"""Process pools whose workers write their own results, in task order.

A worker converts its task (in parallel with the others), then waits for
the task's turn and writes the result itself: nothing travels back to the
parent, which would otherwise receive every result through a pipe and write
it alone (for SQuAD's dev set, ~50 MB: a quarter of a core in the parent and
~7% of the run). A turn carries a running total from task to task (e.g. the
next unique id), so the output is what one process writes.

A failed task stops the tasks after it (they raise `Aborted` when their
turn would come) and the parent re-raises the first failure in task order.
A worker that dies (kill -9, out of memory) breaks the pool: the others
are terminated and `run` raises one `InputError` line.

Example:
    turns = Turns(context, first_total=0)  # given to the workers
    # a worker's task i:  turns.run(i, convert, write)
    #   with result = convert() and total = write(result, total)
    wait_in_order(executor, futures, progress.update)  # the parent
"""

from concurrent.futures.process import BrokenProcessPool
import sys

from bert_tf.io_utils import InputError


class Aborted(Exception):
  """A task's turn will not come: an earlier task failed."""


class Turns:
  """Whose turn it is to write (a task index), the running total, and the
  first failed task; shared by a pool's processes (pass it to the workers
  through the pool's initializer)."""

  def __init__(self, context, first_total):
    self._cond = context.Condition()
    self._next = context.Value("q", 0, lock=False)
    self._total = context.Value("q", first_total, lock=False)
    self._failed = context.Value("q", sys.maxsize, lock=False)

  @property
  def total(self):
    return self._total.value

  def run(self, index, convert, write):
    """In a worker: `result = convert()`, then in task `index`'s turn
    `total = write(result, total)`."""
    try:
      result = convert()
    except BaseException:
      self._fail(index)
      raise
    with self._cond:
      self._cond.wait_for(
        lambda: self._next.value == index or self._failed.value < index
      )
      if self._next.value != index:
        raise Aborted("task %d: an earlier task failed" % index)
      try:
        self._total.value = write(result, self._total.value)
      except BaseException:
        self._fail(index)  # the condition's lock is reentrant
        raise
      self._next.value = index + 1
      self._cond.notify_all()

  def _fail(self, index):
    with self._cond:
      self._failed.value = min(self._failed.value, index)
      self._cond.notify_all()


def wait_in_order(executor, futures, on_done):
  """In the parent: `on_done(result)` per future, in task order. The first
  failure cancels the tasks not started and is raised (the running ones
  abort at their turn)."""
  try:
    for future in futures:
      on_done(future.result())
  except BrokenProcessPool:
    raise InputError(
      "a worker process died (killed, or out of memory?); no output was written"
    ) from None
  except BaseException:
    executor.shutdown(wait=False, cancel_futures=True)
    raise
