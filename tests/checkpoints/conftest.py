"""Fixtures of the fetch tests: a local HTTP server and the tiny original
zip it serves (tests/helpers/fetch_server.py).

Example:
    def test_download(tmp_path, serve, tiny_zip):
      base, requests = serve({ZIP_PATH: tiny_zip[0]}, cut=[ZIP_PATH])
"""

import http.server
import threading

import pytest

from tests.helpers.fetch_server import handler
from tests.helpers.fetch_server import NAME
from tests.helpers.fetch_server import tiny_model_zip


@pytest.fixture
def serve(monkeypatch):
  """serve(files, cut=(), ranges=True) -> (base URL, [(path, Range)])."""
  monkeypatch.setenv("no_proxy", "127.0.0.1")
  servers = []

  def start(files, cut=(), ranges=True):
    requests = []
    server = http.server.ThreadingHTTPServer(
      ("127.0.0.1", 0), handler(files, set(cut), requests, ranges)
    )
    threading.Thread(
      target=server.serve_forever, args=(0.05,), daemon=True
    ).start()
    # Bounded: the server stops by itself even if teardown never runs.
    timer = threading.Timer(120, server.shutdown)
    timer.daemon = True
    timer.start()
    servers.append((server, timer))
    return "http://127.0.0.1:%d" % server.server_port, requests

  yield start
  for server, timer in servers:
    timer.cancel()
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def tiny_zip():
  return tiny_model_zip(NAME)
