"""Runs the project's commands as subprocesses of `python`, from the
repository root, with TensorFlow's C++ logs quiet.

Example:
    process = start("run_ner.py", "--output_dir=%s" % out, *args)
    prefix = kill_after_first_checkpoint(process, out)  # kill -9, then resume
    stdout, stderr = finish(start("run_ner.py", "--output_dir=%s" % out))
"""

import os
import signal
import subprocess
import sys
import time

import tensorflow as tf

from tests.conftest import REPO

ENV = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")


def run(args, timeout=300, **kwargs):
  """`python args...` to its end; the CompletedProcess (text, captured)."""
  return subprocess.run(
    [sys.executable] + [str(a) for a in args],
    cwd=REPO,
    env=ENV,
    capture_output=True,
    text=True,
    timeout=timeout,
    check=False,
    **kwargs,
  )


def run_command(args, timeout=300, **kwargs):
  """`python args...` to its end; (exit code, stderr)."""
  result = run(args, timeout, **kwargs)
  return result.returncode, result.stderr


def start(*args, quiet=False):
  """`python args...` in the background, stdout and stderr piped (`quiet`:
  discarded, for a chatty process nobody reads while it runs)."""
  output = subprocess.DEVNULL if quiet else subprocess.PIPE
  return subprocess.Popen(
    [sys.executable] + [str(a) for a in args],
    cwd=REPO,
    env=ENV,
    stdout=output,
    stderr=output,
    text=True,
  )


def finish(process, timeout=300):
  """Waits for a started process, asserts it succeeded; (stdout, stderr)."""
  stdout, stderr = process.communicate(timeout=timeout)
  assert process.returncode == 0, stderr[-3000:]
  return stdout, stderr


def kill_when(process, ready, what, timeout=240):
  """kill -9 `process` as soon as `ready()` holds; fails if it ends first or
  `what` has not happened within `timeout` seconds."""
  deadline = time.time() + timeout
  while not ready():
    assert process.poll() is None, (process.communicate()[1] or "")[-3000:]
    assert time.time() < deadline, "no %s within %d s" % (what, timeout)
    time.sleep(0.005)
  process.send_signal(signal.SIGKILL)
  process.communicate()


def kill_after_first_checkpoint(process, output_dir):
  """kill -9 once `output_dir` has a checkpoint; its latest prefix."""
  kill_when(process, (output_dir / "checkpoint").exists, "checkpoint")
  return tf.train.latest_checkpoint(str(output_dir))
