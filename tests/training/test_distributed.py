"""MirroredStrategy (2 logical CPUs) and 2-process MultiWorkerMirroredStrategy
train exactly like one device at the same global batch.

Both run in fresh subprocesses (`tests/helpers/tiny_task.py`): logical
devices must be configured before TF initialises, and each worker is a
process.
"""

import json
import os
import socket
import subprocess
import sys

import numpy as np
import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.process  # starts programs

_TIMEOUT = 150


def _env(**more):
  env = dict(
    os.environ,
    TF_CPP_MIN_LOG_LEVEL="2",
    PYTHONPATH=str(REPO),
    CUDA_VISIBLE_DEVICES="",
  )
  env.update(more)
  return env


def _command(mode, out):
  return [sys.executable, "-m", "tests.helpers.tiny_task", mode, str(out)]


def _free_ports(count):
  sockets = [socket.socket() for _ in range(count)]
  for s in sockets:
    s.bind(("127.0.0.1", 0))
  ports = [s.getsockname()[1] for s in sockets]
  for s in sockets:
    s.close()
  return ports


@pytest.fixture(scope="module")
def mirrored(tmp_path_factory):
  out = tmp_path_factory.mktemp("mirrored") / "out.npz"
  subprocess.run(
    _command("mirrored", out),
    env=_env(),
    cwd=REPO,
    check=True,
    timeout=_TIMEOUT,
    capture_output=True,
  )
  return dict(np.load(out))


def _weights(result, prefix):
  return [
    result[k] for k in sorted(result) if k[0] == prefix and k[1:].isdigit()
  ]


def test_mirrored_matches_single_device(mirrored):
  np.testing.assert_allclose(
    mirrored["losses"], mirrored["single"], rtol=0, atol=1e-5
  )
  for w, s in zip(_weights(mirrored, "w"), _weights(mirrored, "s")):
    np.testing.assert_allclose(w, s, rtol=0, atol=1e-5)
  np.testing.assert_allclose(
    mirrored["resumed"],
    np.concatenate([w.ravel() for w in _weights(mirrored, "w")]),
    rtol=0,
    atol=1e-6,
  )
  # Dropout + accumulation + XLA ran under 2 replicas; predict kept all
  # 13 rows of the partial batches, in order.
  assert np.all(np.isfinite(mirrored["accum"]))
  assert mirrored["logits"].shape == (13, 3)  # Rows minus direct call.
  np.testing.assert_allclose(mirrored["logits"], 0, atol=1e-6)


def test_multi_worker_matches_single_device(mirrored, tmp_path):
  ports = _free_ports(2)
  cluster = {"worker": ["127.0.0.1:%d" % p for p in ports]}
  out = tmp_path / "out.npz"
  procs = []
  for index in range(2):
    config = json.dumps(
      {"cluster": cluster, "task": {"type": "worker", "index": index}}
    )
    procs.append(
      subprocess.Popen(
        _command("worker", out),
        env=_env(TF_CONFIG=config),
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
      )
    )
  try:
    for proc in procs:
      _, err = proc.communicate(timeout=_TIMEOUT)
      assert proc.returncode == 0, err.decode()[-2000:]
  finally:
    for proc in procs:
      proc.kill()
  result = dict(np.load(out))
  saved = sorted(p.name for p in (tmp_path / "mw").glob("ckpt-*.index"))
  assert saved == ["ckpt-2.index", "ckpt-4.index", "ckpt-6.index"]
  np.testing.assert_allclose(
    result["losses"], mirrored["single"], rtol=0, atol=1e-5
  )
  for w, s in zip(_weights(result, "w"), _weights(mirrored, "s")):
    np.testing.assert_allclose(w, s, rtol=0, atol=1e-5)
