"""Downloads that go wrong: a cut connection resumed with Range, within the
run and in the next one; bad checksums, HTML pages and responses without
Content-Length refused and removed; a trickle, a deadline, no network and
Ctrl-C, each said in one line. Against the local server of
tests/helpers/fetch_server.py."""

import hashlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

from bert_tf.checkpoints import fetch
from bert_tf.checkpoints import model_registry
from bert_tf.checkpoints import transfer
from bert_tf.io_utils import InputError
from bert_tf.modeling.fetching import fetch_model
from tests.conftest import REPO
from tests.helpers.fetch_server import assert_loads
from tests.helpers.fetch_server import NAME
from tests.helpers.fetch_server import Served
from tests.helpers.fetch_server import ZIP_PATH
from tests.helpers.hf_models import tiny_hf_model


def test_cut_connection_resumes_with_range(tmp_path, serve, tiny_zip):
  data, arrays = tiny_zip
  base, requests = serve({ZIP_PATH: data}, cut=[ZIP_PATH])
  model_dir = fetch_model(NAME, str(tmp_path), base_url=base)
  assert_loads(model_dir, arrays)
  assert requests == [
    (ZIP_PATH, None),
    (ZIP_PATH, "bytes=%d-" % (len(data) // 2)),
  ]


def test_server_without_range_support_sends_it_all_again(
  tmp_path, serve, tiny_zip
):
  data, arrays = tiny_zip
  base, requests = serve({ZIP_PATH: data}, cut=[ZIP_PATH], ranges=False)
  assert_loads(fetch_model(NAME, str(tmp_path), base_url=base), arrays)
  assert len(requests) == 2


def test_broken_download_resumes_in_the_next_run(tmp_path, serve, tiny_zip):
  data, arrays = tiny_zip
  base, requests = serve({ZIP_PATH: data}, cut=[ZIP_PATH])
  with pytest.raises(InputError, match="run again to resume") as e:
    fetch_model(NAME, str(tmp_path), base_url=base, retries=0)
  assert "\n" not in str(e.value)
  part = tmp_path / (NAME + ".zip.part")
  assert part.read_bytes() == data[: len(data) // 2]
  assert not (tmp_path / NAME).exists()
  assert_loads(fetch_model(NAME, str(tmp_path), base_url=base), arrays)
  assert requests[-1] == (ZIP_PATH, "bytes=%d-" % (len(data) // 2))


def test_bad_checksum_is_refused_and_removed(
  tmp_path, serve, tiny_zip, monkeypatch
):
  data, _ = tiny_zip
  good = hashlib.sha256(data).hexdigest()
  bad = good[::-1]
  entry = model_registry.GOOGLE_MODELS[NAME]._replace(sha256=bad)
  monkeypatch.setitem(model_registry.GOOGLE_MODELS, NAME, entry)
  base, _ = serve({ZIP_PATH: data})
  with pytest.raises(InputError) as e:
    fetch_model(NAME, str(tmp_path), base_url=base)
  message = str(e.value)
  assert "\n" not in message and good in message and bad in message
  assert os.listdir(tmp_path) == []
  monkeypatch.setitem(
    model_registry.GOOGLE_MODELS, NAME, entry._replace(sha256=good.upper())
  )
  assert os.path.isdir(fetch_model(NAME, str(tmp_path), base_url=base))


def test_missing_file_is_one_line_http_error(tmp_path, serve):
  base, _ = serve({})
  with pytest.raises(InputError, match=r"uncased_L-2_H-128_A-2.zip: HTTP 404"):
    fetch_model(NAME, str(tmp_path), base_url=base)


def _hf_files(tmp_path, repo="someone/tiny-bert"):
  """{URL path: bytes} of a tiny HF repo."""
  hf_dir = tmp_path / "hf"
  tiny_hf_model(str(hf_dir))
  return {
    "/%s/resolve/main/%s" % (repo, name): (hf_dir / name).read_bytes()
    for name in fetch.HF_FILES
  }


_QUICK = transfer.Network(retries=1, timeout=0.5, deadline=3, backoff=0.01)


@pytest.mark.parametrize("case", ["no_length", "html", "html_as_zip"])
def test_unverifiable_or_html_responses_are_refused(
  tmp_path, serve, tiny_zip, case
):
  data = tiny_zip[0]
  page = b"<!DOCTYPE html><html><body>Sign in</body></html>"
  served = {
    "no_length": Served(data, length=False),
    "html": Served(page, headers=[("Content-Type", "text/html")]),
    "html_as_zip": Served(page, headers=[("Content-Type", "application/zip")]),
  }[case]
  base, _ = serve({ZIP_PATH: served})
  with pytest.raises(InputError) as e:
    fetch_model(NAME, str(tmp_path), base_url=base, network=_QUICK)
  message = str(e.value)
  assert "\n" not in message and ZIP_PATH in message
  assert {
    "no_length": "no Content-Length",
    "html": "HTML page",
    "html_as_zip": "HTML/XML page",
  }[case] in message
  if case == "html_as_zip":  # Downloaded, then removed: the line says so.
    assert "removed %s.zip.part" % (tmp_path / NAME) in message
  assert os.listdir(tmp_path) == []
  # The next run, against a good server, is not poisoned.
  good, _ = serve({ZIP_PATH: data})
  assert os.path.isdir(fetch_model(NAME, str(tmp_path), base_url=good))


def test_hub_sha256_is_checked_through_the_redirect(tmp_path, serve):
  files = _hf_files(tmp_path)
  weights = "/someone/tiny-bert/resolve/main/model.safetensors"
  good = hashlib.sha256(files[weights]).hexdigest()
  blob = "/cdn/blob"

  def hub(sha256):
    return dict(
      files,
      **{
        weights: Served(
          b"", headers=[("X-Linked-Etag", '"%s"' % sha256)], redirect=blob
        ),
        blob: files[weights],
      },
    )

  base, requests = serve(hub(good[::-1]))
  out = tmp_path / "models"
  with pytest.raises(InputError) as e:
    fetch_model("someone/tiny-bert", str(out), hf_endpoint=base)
  message = str(e.value)
  assert (
    "sha256 %s, expected %s (published by the server)" % (good, good[::-1])
  ) in message
  assert (
    "removed %s"
    % (out / ".someone--tiny-bert.download" / "model.safetensors.part")
    in message
  )
  # Only the verified files stay, in the staging folder, for the next run.
  assert os.listdir(out) == [".someone--tiny-bert.download"]
  assert sorted(os.listdir(out / ".someone--tiny-bert.download")) == [
    "config.json",
    "vocab.txt",
  ]
  assert (weights, None) in requests and (blob, None) in requests
  base, _ = serve(hub(good))
  assert os.path.isdir(
    fetch_model("someone/tiny-bert", str(out), hf_endpoint=base)
  )


def test_a_trickle_meets_the_speed_floor_and_the_deadline(
  tmp_path, serve, tiny_zip
):
  base, requests = serve({ZIP_PATH: Served(tiny_zip[0], trickle=0.02)})
  slow = transfer.Network(retries=1, timeout=0.3, deadline=60, backoff=0.01)
  started = time.monotonic()
  with pytest.raises(
    InputError,
    match=r"under 1024 bytes/s for 0.3 s; "
    r"tried 2 times .* kept in .*\.zip\.part",
  ):
    fetch_model(NAME, str(tmp_path), base_url=base, network=slow)
  assert requests[1][1].startswith("bytes=")  # the retry resumed
  capped = transfer.Network(retries=5, timeout=30, deadline=0.5)
  with pytest.raises(InputError, match="not complete after the 0.5 s deadline"):
    fetch_model(NAME, str(tmp_path), base_url=base, network=capped)
  assert time.monotonic() - started < 10
  assert os.listdir(tmp_path) == [NAME + ".zip.part"]


def test_no_network_is_said_plainly_after_backing_off(tmp_path, monkeypatch):
  def no_dns(*args, **kwargs):
    raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

  monkeypatch.setattr(socket, "getaddrinfo", no_dns)
  # Only this thread's pauses: a server thread left by an earlier test may
  # still be trickling (time.sleep(0.02)) and must really sleep.
  pauses, sleep, me = [], time.sleep, threading.get_ident()
  monkeypatch.setattr(
    time,
    "sleep",
    lambda seconds: (
      pauses.append(seconds) if threading.get_ident() == me else sleep(seconds)
    ),
  )
  with pytest.raises(InputError) as e:
    fetch_model(NAME, str(tmp_path), base_url="http://models.example")
  assert (
    "download failed: no network (cannot resolve models.example: "
    "Name or service not known); tried 4 times"
  ) in str(e.value)
  assert pauses == [1.0, 2.0, 4.0]
  with socket.socket() as closed:  # a port nobody listens on
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
  monkeypatch.undo()
  with pytest.raises(InputError, match="cannot connect to 127.0.0.1:%d" % port):
    fetch_model(
      NAME, str(tmp_path), base_url="http://127.0.0.1:%d" % port, network=_QUICK
    )


@pytest.mark.process
def test_ctrl_c_is_one_line_and_downloading_needs_no_tensorflow(
  tmp_path, serve, tiny_zip
):
  # 0.1 s a byte: the 5.9 kB transfer would take ten minutes, so it is
  # still running when the signal comes, however loaded the machine.
  base, _ = serve({ZIP_PATH: Served(tiny_zip[0], trickle=0.1)})
  env = dict(os.environ, no_proxy="127.0.0.1")
  script = (
    "import sys; from bert_tf.cli import fetch_model; "
    "sys.argv = ['fetch_model', '--output_dir=%s', '--base_url=%s', "
    "'%s']\ntry:\n  fetch_model.run()\nfinally:\n"
    "  print('tensorflow' in sys.modules, file=sys.stderr)"
    % (tmp_path, base, NAME)
  )
  # As from a terminal: a shell without job control starts background jobs
  # with SIGINT ignored, and Python then installs no KeyboardInterrupt.
  restore_sigint = lambda: signal.signal(signal.SIGINT, signal.SIG_DFL)
  with subprocess.Popen(
    [sys.executable, "-c", script],
    cwd=REPO,
    env=env,
    stderr=subprocess.PIPE,
    text=True,
    preexec_fn=restore_sigint,
  ) as process:
    try:
      deadline = time.monotonic() + 60
      part = tmp_path / (NAME + ".zip.part")
      while not part.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
      time.sleep(0.3)  # in the middle of the transfer
      assert part.exists() and process.poll() is None
      process.send_signal(signal.SIGINT)
      stderr = process.communicate(timeout=60)[1]
    finally:
      if process.poll() is None:  # no orphan if an assertion failed
        process.kill()
  assert process.returncode == 1
  lines = stderr.splitlines()
  assert lines[-1] == "False"  # TensorFlow never loaded
  assert len(lines) == 2 and lines[0].startswith(
    "ERROR: %s%s: interrupted; " % (base, ZIP_PATH)
  ), stderr
  assert "kept in %s (the next run resumes)" % part in lines[0]
  assert os.listdir(tmp_path) == [part.name]
