"""Whether a process pool's workers have ended, and another process's
children (Linux).

`multiprocessing.Process.join` / `is_alive` can't tell for the workers of a
`ProcessPoolExecutor`: the pool's own thread reaps them, and a second
`waitpid` on a reaped child reads as "still running". This looks at the
process itself.

Example:
    assert not children_left(30)  # waits up to 30 s, kills what is left
"""

import multiprocessing
import os
import signal
import time


def running(pid):
  """Whether `pid` runs (not ended, not a zombie)."""
  try:
    os.kill(pid, 0)
  except ProcessLookupError:
    return False
  try:
    with open("/proc/%d/stat" % pid, encoding="ascii") as f:
      return f.read().rsplit(")", 1)[1].split()[0] != "Z"  # not a zombie
  # Reaped between the two looks: reading its stat file fails with ESRCH.
  except (FileNotFoundError, ProcessLookupError):
    return False


def children_of(pid):
  """The pids of `pid`'s running children."""
  found = []
  for entry in os.listdir("/proc"):
    if entry.isdigit():
      try:
        with open("/proc/%s/stat" % entry, encoding="ascii") as f:
          fields = f.read().rsplit(")", 1)[1].split()
      except OSError:
        continue
      if int(fields[1]) == pid and fields[0] != "Z":
        found.append(int(entry))
  return found


def children_left(seconds):
  """The pids of this process's multiprocessing children still running
  after up to `seconds`; those are killed."""
  pids = [child.pid for child in multiprocessing.active_children()]
  deadline = time.monotonic() + seconds
  while any(map(running, pids)) and time.monotonic() < deadline:
    time.sleep(0.05)
  left = [pid for pid in pids if running(pid)]
  for pid in left:
    try:
      os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:  # ended just now
      pass
  return left
