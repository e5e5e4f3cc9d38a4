"""Pool workers that write in turn (`data_prep.common.turns`): results land
in task order whatever order the tasks finish in; a failed task is raised in
the parent without a hang and stops the tasks after it; a killed worker ends
in one InputError line."""

import concurrent.futures
import multiprocessing
import os
import signal
import time

import pytest

from bert_tf.io_utils import InputError
from data_prep.common.turns import Turns
from data_prep.common.turns import wait_in_order
from tests.helpers.pool_children import children_left

_state = {}


def _init(turns, path):
  _state["turns"], _state["path"] = turns, path


def _append(result, total):
  with open(_state["path"], "a", encoding="utf-8") as f:
    f.write("%d:%d\n" % (result, total))
  return total + result


def _task(index, fail_at, kill_at):
  def convert():
    # Later tasks finish first: the turns, not the finish order, decide.
    # A failing task fails late, once the tasks behind it wait for turns.
    time.sleep(0.3 if index == fail_at else 0.02 * ((7 - index) % 4))
    if index == fail_at:
      raise ValueError("task %d is bad" % index)
    if index == kill_at:
      os.kill(os.getpid(), signal.SIGKILL)
    return index + 1

  _state["turns"].run(index, convert, _append)
  return index


def _run(tmp_path, tasks, fail_at=-1, kill_at=-1):
  path = tmp_path / "out.txt"
  path.write_text("")
  context = multiprocessing.get_context("fork")
  turns = Turns(context, first_total=100)
  done = []
  with concurrent.futures.ProcessPoolExecutor(
    3, context, _init, (turns, str(path))
  ) as executor:
    futures = [
      executor.submit(_task, i, fail_at, kill_at) for i in range(tasks)
    ]
    try:
      wait_in_order(executor, futures, done.append)
    finally:
      lines = path.read_text().split()
  return turns, done, lines


def test_results_are_written_in_task_order_with_the_running_total(tmp_path):
  turns, done, lines = _run(tmp_path, 8)
  assert done == list(range(8))
  # Task i adds i + 1 to a total that starts at 100.
  totals = [100 + sum(range(1, i + 1)) for i in range(8)]
  assert lines == ["%d:%d" % (i + 1, totals[i]) for i in range(8)]
  assert turns.total == 100 + sum(range(1, 9))


def test_a_failed_task_is_raised_and_stops_the_tasks_after_it(tmp_path):
  with pytest.raises(ValueError, match="task 5 is bad"):
    _run(tmp_path, 12, fail_at=5)
  # Tasks 6 and 7 waited for their turns when task 5 failed: they end too.
  assert not children_left(30)
  lines = (tmp_path / "out.txt").read_text().split()
  assert [line.split(":")[0] for line in lines] == ["1", "2", "3", "4", "5"]


def test_a_killed_worker_ends_in_one_input_error(tmp_path):
  with pytest.raises(InputError, match="a worker process died"):
    _run(tmp_path, 12, kill_at=4)
  lines = (tmp_path / "out.txt").read_text().split()
  assert len(lines) <= 4  # nothing after the dead worker's task
