"""Models by name, against a local HTTP server on 127.0.0.1 (with Range
support, and able to cut a connection mid-file) serving a tiny original zip
and a tiny HuggingFace folder."""

import collections
import hashlib
import http.server
import io
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import zipfile

import numpy as np
import pytest

from bert_tf.checkpoints import checkpoint_io
from bert_tf.checkpoints import fetch
from bert_tf.checkpoints import model_registry
from bert_tf.cli.fetch_model import fetch_model
from bert_tf.io_utils import InputError
from bert_tf.modeling import pretrained
from bert_tf.modeling.bert_config import BertConfig
from bert_tf.modeling.bert_encoder import BertEncoder
from tests.conftest import REPO
from tests.helpers.hf_models import tiny_hf_model

_NAME = "uncased_L-2_H-128_A-2"
_ZIP_PATH = "/" + model_registry.GOOGLE_MODELS[_NAME].path
_CONFIG = {"hidden_size": 8, "num_hidden_layers": 1, "num_attention_heads": 2,
           "intermediate_size": 16, "vocab_size": 12,
           "max_position_embeddings": 16, "type_vocab_size": 2,
           "hidden_act": "gelu", "hidden_dropout_prob": 0.1,
           "attention_probs_dropout_prob": 0.1, "initializer_range": 0.02}


Served = collections.namedtuple(
    "Served", ["data", "headers", "length", "trickle", "redirect"],
    defaults=[(), True, 0.0, None])
Served.__doc__ = """A misbehaving response: extra `headers`, no
Content-Length unless `length`, one byte per `trickle` seconds, or a 302 to
`redirect` (carrying the extra headers, as the Hub does)."""


def _handler(files, cut, requests, ranges):
  """Serves `files` (URL path -> bytes or Served); a path in `cut` gets half
  of its body once, then the connection closes; Range is ignored unless
  `ranges`."""

  class Handler(http.server.BaseHTTPRequestHandler):

    def do_GET(self):  # pylint: disable=invalid-name
      requests.append((self.path, self.headers.get("Range")))
      served = files.get(self.path)
      if served is None:
        self.send_error(404)
        return
      if not isinstance(served, Served):
        served = Served(served)
      data = served.data
      if served.redirect:
        self.send_response(302)
        self.send_header("Location", served.redirect)
        for key, value in served.headers:
          self.send_header(key, value)
        self.send_header("Content-Length", "0")
        self.end_headers()
        return
      match = ranges and re.fullmatch(r"bytes=(\d+)-",
                                      self.headers.get("Range") or "")
      start = int(match.group(1)) if match else 0
      self.send_response(206 if match else 200)
      if match:
        self.send_header("Content-Range", "bytes %d-%d/%d" %
                         (start, len(data) - 1, len(data)))
      for key, value in served.headers:
        self.send_header(key, value)
      if served.length:
        self.send_header("Content-Length", str(len(data) - start))
      self.end_headers()
      body = data[start:]
      if self.path in cut:
        cut.remove(self.path)
        body = body[:len(body) // 2]
      if not served.trickle:
        self.wfile.write(body)
        return
      try:
        for i in range(len(body)):
          self.wfile.write(body[i:i + 1])
          self.wfile.flush()
          time.sleep(served.trickle)
      except OSError:  # the client gave up
        pass

    def log_message(self, *args):
      del args

  return Handler


@pytest.fixture
def serve(monkeypatch):
  """serve(files, cut=(), ranges=True) -> (base URL, [(path, Range)])."""
  monkeypatch.setenv("no_proxy", "127.0.0.1")
  servers = []

  def start(files, cut=(), ranges=True):
    requests = []
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), _handler(files, set(cut), requests, ranges))
    threading.Thread(target=server.serve_forever, args=(0.05,),
                     daemon=True).start()
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


def _tiny_zip(top_folder):
  """(zip bytes, {variable name: array}) of a tiny original checkpoint."""
  config = BertConfig.from_dict(_CONFIG)
  arrays = {name: variable.numpy() for name, variable in
            checkpoint_io.tf1_name_map(BertEncoder(config)).items()}
  folder = top_folder + "/" if top_folder else ""
  buffer = io.BytesIO()
  with zipfile.ZipFile(buffer, "w") as zf:
    with tempfile.TemporaryDirectory() as tmp:
      checkpoint_io.save_tf1_checkpoint(os.path.join(tmp, "bert_model.ckpt"),
                                        arrays)
      for name in sorted(os.listdir(tmp)):
        zf.write(os.path.join(tmp, name), folder + name)
    zf.writestr(folder + "bert_config.json", json.dumps(_CONFIG))
    zf.writestr(folder + "vocab.txt", "".join("t%d\n" % i for i in range(12)))
  return buffer.getvalue(), arrays


@pytest.fixture(scope="module")
def tiny_zip():
  return _tiny_zip(_NAME)


def _assert_loads(model_dir, arrays):
  config = BertConfig.from_json_file(os.path.join(model_dir,
                                                  "bert_config.json"))
  encoder, heads, _ = pretrained.load_tf1_model(
      config, os.path.join(model_dir, "bert_model.ckpt"))
  loaded = checkpoint_io.tf1_name_map(encoder, **heads)
  assert sorted(loaded) == sorted(arrays)
  for name, value in arrays.items():
    np.testing.assert_array_equal(loaded[name].numpy(), value, err_msg=name)


@pytest.mark.parametrize("top_folder", [_NAME, None])
def test_full_download_unpacks_and_is_reused(tmp_path, serve, top_folder):
  # The 2018 zips hold a top folder, the 2020 ones do not.
  data, arrays = _tiny_zip(top_folder)
  base, requests = serve({_ZIP_PATH: data})
  model_dir = fetch_model(_NAME, str(tmp_path), base_url=base)
  assert model_dir == str(tmp_path / _NAME)
  assert sorted(os.listdir(tmp_path)) == [_NAME]  # No zip, .part or scratch.
  umask = os.umask(0)
  os.umask(umask)
  assert os.stat(model_dir).st_mode & 0o777 == 0o777 & ~umask
  _assert_loads(model_dir, arrays)
  assert fetch_model("BERT-Tiny", str(tmp_path), base_url=base) == model_dir
  assert requests == [(_ZIP_PATH, None)]  # Reused, not downloaded again.


def test_cut_connection_resumes_with_range(tmp_path, serve, tiny_zip):
  data, arrays = tiny_zip
  base, requests = serve({_ZIP_PATH: data}, cut=[_ZIP_PATH])
  model_dir = fetch_model(_NAME, str(tmp_path), base_url=base)
  _assert_loads(model_dir, arrays)
  assert requests == [(_ZIP_PATH, None),
                      (_ZIP_PATH, "bytes=%d-" % (len(data) // 2))]


def test_server_without_range_support_sends_it_all_again(tmp_path, serve,
                                                          tiny_zip):
  data, arrays = tiny_zip
  base, requests = serve({_ZIP_PATH: data}, cut=[_ZIP_PATH], ranges=False)
  _assert_loads(fetch_model(_NAME, str(tmp_path), base_url=base), arrays)
  assert len(requests) == 2


def test_broken_download_resumes_in_the_next_run(tmp_path, serve, tiny_zip):
  data, arrays = tiny_zip
  base, requests = serve({_ZIP_PATH: data}, cut=[_ZIP_PATH])
  with pytest.raises(InputError, match="run again to resume") as e:
    fetch_model(_NAME, str(tmp_path), base_url=base, retries=0)
  assert "\n" not in str(e.value)
  part = tmp_path / (_NAME + ".zip.part")
  assert part.read_bytes() == data[:len(data) // 2]
  assert not (tmp_path / _NAME).exists()
  _assert_loads(fetch_model(_NAME, str(tmp_path), base_url=base), arrays)
  assert requests[-1] == (_ZIP_PATH, "bytes=%d-" % (len(data) // 2))


def test_bad_checksum_is_refused_and_removed(tmp_path, serve, tiny_zip,
                                             monkeypatch):
  data, _ = tiny_zip
  good = hashlib.sha256(data).hexdigest()
  bad = good[::-1]
  entry = model_registry.GOOGLE_MODELS[_NAME]._replace(sha256=bad)
  monkeypatch.setitem(model_registry.GOOGLE_MODELS, _NAME, entry)
  base, _ = serve({_ZIP_PATH: data})
  with pytest.raises(InputError) as e:
    fetch_model(_NAME, str(tmp_path), base_url=base)
  message = str(e.value)
  assert "\n" not in message and good in message and bad in message
  assert os.listdir(tmp_path) == []
  monkeypatch.setitem(model_registry.GOOGLE_MODELS, _NAME,
                      entry._replace(sha256=good.upper()))
  assert os.path.isdir(fetch_model(_NAME, str(tmp_path), base_url=base))


def test_archive_without_checkpoint_leaves_nothing(tmp_path, serve):
  buffer = io.BytesIO()
  with zipfile.ZipFile(buffer, "w") as zf:
    zf.writestr(_NAME + "/vocab.txt", "a\n")
  base, _ = serve({_ZIP_PATH: buffer.getvalue()})
  with pytest.raises(InputError, match="lacks bert_config.json, "
                     "bert_model.ckpt.index"):
    fetch_model(_NAME, str(tmp_path), base_url=base)
  assert [n for n in os.listdir(tmp_path) if n != _NAME + ".zip"] == []


def test_missing_file_is_one_line_http_error(tmp_path, serve):
  base, _ = serve({})
  with pytest.raises(InputError, match=r"uncased_L-2_H-128_A-2.zip: HTTP 404"):
    fetch_model(_NAME, str(tmp_path), base_url=base)


def test_unknown_name_lists_close_names():
  with pytest.raises(InputError) as e:
    fetch.resolve_name("uncased_L-12_H-786_A-12")
  message = str(e.value)
  assert "\n" not in message
  assert "close names: uncased_L-12_H-768_A-12," in message
  assert fetch.resolve_name("bert-mini") == ("google", "uncased_L-4_H-256_A-4")
  assert fetch.resolve_name("a/b-1.0") == ("hf", "a/b-1.0")
  with pytest.raises(InputError, match="not a HuggingFace repo id"):
    fetch.resolve_name("a/b/c")


def test_registry_holds_the_original_release():
  models = model_registry.GOOGLE_MODELS
  assert len(models) == 9 + 24
  assert (models["uncased_L-12_H-768_A-12"].path ==
          "2018_10_18/uncased_L-12_H-768_A-12.zip")
  assert (models["uncased_L-12_H-768_A-12_2020"].path ==
          "2020_02_20/uncased_L-12_H-768_A-12.zip")
  assert models["wwm_cased_L-24_H-1024_A-16"].path.startswith("2019_05_30/")


def test_hf_id_is_converted_to_an_original_checkpoint(tmp_path, serve):
  hf_dir = tmp_path / "hf"
  tiny_hf_model(str(hf_dir))
  repo = "someone/tiny-bert"
  files = {"/%s/resolve/main/%s" % (repo, name): (hf_dir / name).read_bytes()
           for name in fetch.HF_FILES}
  cut = "/%s/resolve/main/model.safetensors" % repo
  base, requests = serve(files, cut=[cut])
  out = tmp_path / "models"
  model_dir = fetch_model(repo, str(out), hf_endpoint=base)
  assert model_dir == str(out / "someone--tiny-bert")
  assert sorted(os.listdir(out)) == ["someone--tiny-bert"]
  assert (out / "someone--tiny-bert" / "vocab.txt").read_bytes() == (
      hf_dir / "vocab.txt").read_bytes()
  assert requests[-1] == (cut, "bytes=%d-" % (len(files[cut]) // 2))
  # The converted checkpoint equals what loading the HF folder gives.
  _, encoder, heads, _ = pretrained.load_hf_model(str(hf_dir))
  expected = {name: variable.numpy() for name, variable in
              checkpoint_io.tf1_name_map(encoder, **heads).items()}
  _assert_loads(model_dir, expected)


def test_command_line(tmp_path, serve, tiny_zip):
  base, _ = serve({_ZIP_PATH: tiny_zip[0]})
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", no_proxy="127.0.0.1")
  command = [sys.executable, "-m", "bert_tf.fetch_model",
             "--output_dir=%s" % tmp_path, "--base_url=%s" % base]
  ok = subprocess.run(command + [_NAME], cwd=REPO, env=env, text=True,
                      capture_output=True, timeout=120, check=False)
  assert ok.returncode == 0, ok.stderr[-2000:]
  assert ok.stdout == str(tmp_path / _NAME) + "\n"
  bad = subprocess.run(command + ["bert-tinny"], cwd=REPO, env=env,
                       text=True, capture_output=True, timeout=120,
                       check=False)
  assert bad.returncode == 1
  assert bad.stderr.startswith("ERROR: unknown model 'bert-tinny'; close "
                               "names: bert-tiny")
  assert bad.stderr.count("\n") == 1


def _hf_files(tmp_path, repo="someone/tiny-bert"):
  """{URL path: bytes} of a tiny HF repo."""
  hf_dir = tmp_path / "hf"
  tiny_hf_model(str(hf_dir))
  return {"/%s/resolve/main/%s" % (repo, name): (hf_dir / name).read_bytes()
          for name in fetch.HF_FILES}


_QUICK = fetch.Network(retries=1, timeout=0.5, deadline=3, backoff=0.01)


@pytest.mark.parametrize("case", ["no_length", "html", "html_as_zip"])
def test_unverifiable_or_html_responses_are_refused(tmp_path, serve,
                                                   tiny_zip, case):
  data = tiny_zip[0]
  page = b"<!DOCTYPE html><html><body>Sign in</body></html>"
  served = {"no_length": Served(data, length=False),
            "html": Served(page, headers=[("Content-Type", "text/html")]),
            "html_as_zip": Served(page, headers=[
                ("Content-Type", "application/zip")])}[case]
  base, _ = serve({_ZIP_PATH: served})
  with pytest.raises(InputError) as e:
    fetch_model(_NAME, str(tmp_path), base_url=base, network=_QUICK)
  message = str(e.value)
  assert "\n" not in message and _ZIP_PATH in message
  assert {"no_length": "no Content-Length", "html": "HTML page",
          "html_as_zip": "HTML/XML page"}[case] in message
  if case == "html_as_zip":  # Downloaded, then removed: the line says so.
    assert "removed %s.zip.part" % (tmp_path / _NAME) in message
  assert os.listdir(tmp_path) == []
  # The next run, against a good server, is not poisoned.
  good, _ = serve({_ZIP_PATH: data})
  assert os.path.isdir(fetch_model(_NAME, str(tmp_path), base_url=good))


def test_hub_sha256_is_checked_through_the_redirect(tmp_path, serve):
  files = _hf_files(tmp_path)
  weights = "/someone/tiny-bert/resolve/main/model.safetensors"
  good = hashlib.sha256(files[weights]).hexdigest()
  blob = "/cdn/blob"

  def hub(sha256):
    return dict(files, **{
        weights: Served(b"", headers=[("X-Linked-Etag", '"%s"' % sha256)],
                        redirect=blob),
        blob: files[weights]})

  base, requests = serve(hub(good[::-1]))
  out = tmp_path / "models"
  with pytest.raises(InputError) as e:
    fetch_model("someone/tiny-bert", str(out), hf_endpoint=base)
  message = str(e.value)
  assert ("sha256 %s, expected %s (published by the server)" %
          (good, good[::-1])) in message
  assert "removed %s" % (out / ".someone--tiny-bert.download" /
                         "model.safetensors.part") in message
  # Only the verified files stay, in the staging folder, for the next run.
  assert os.listdir(out) == [".someone--tiny-bert.download"]
  assert sorted(os.listdir(out / ".someone--tiny-bert.download")) == [
      "config.json", "vocab.txt"]
  assert (weights, None) in requests and (blob, None) in requests
  base, _ = serve(hub(good))
  assert os.path.isdir(fetch_model("someone/tiny-bert", str(out),
                                   hf_endpoint=base))


def test_a_trickle_meets_the_speed_floor_and_the_deadline(tmp_path, serve,
                                                          tiny_zip):
  base, requests = serve({_ZIP_PATH: Served(tiny_zip[0], trickle=0.02)})
  slow = fetch.Network(retries=1, timeout=0.3, deadline=60, backoff=0.01)
  started = time.monotonic()
  with pytest.raises(InputError, match=r"under 1024 bytes/s for 0.3 s; "
                     r"tried 2 times .* kept in .*\.zip\.part"):
    fetch_model(_NAME, str(tmp_path), base_url=base, network=slow)
  assert requests[1][1].startswith("bytes=")  # the retry resumed
  capped = fetch.Network(retries=5, timeout=30, deadline=0.5)
  with pytest.raises(InputError, match="not complete after the 0.5 s "
                     "deadline"):
    fetch_model(_NAME, str(tmp_path), base_url=base, network=capped)
  assert time.monotonic() - started < 10
  assert os.listdir(tmp_path) == [_NAME + ".zip.part"]


def test_no_network_is_said_plainly_after_backing_off(tmp_path, monkeypatch):
  def no_dns(*args, **kwargs):
    raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

  monkeypatch.setattr(socket, "getaddrinfo", no_dns)
  pauses = []
  monkeypatch.setattr(time, "sleep", pauses.append)
  with pytest.raises(InputError) as e:
    fetch_model(_NAME, str(tmp_path), base_url="http://models.example")
  assert ("download failed: no network (cannot resolve models.example: "
          "Name or service not known); tried 4 times") in str(e.value)
  assert pauses == [1.0, 2.0, 4.0]
  with socket.socket() as closed:  # a port nobody listens on
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
  monkeypatch.undo()
  with pytest.raises(InputError, match="cannot connect to 127.0.0.1:%d" %
                     port):
    fetch_model(_NAME, str(tmp_path), base_url="http://127.0.0.1:%d" % port,
                network=_QUICK)


def test_names_and_local_folders(tmp_path):
  assert fetch.resolve_name("bert-base-uncased") == (
      "hf", "google-bert/bert-base-uncased")
  assert fetch.resolve_name("BERT-Large-Cased") == (
      "hf", "google-bert/bert-large-cased")
  assert fetch.resolve_name("google-bert/bert-base-cased") == (
      "hf", "google-bert/bert-base-cased")
  with pytest.raises(InputError, match="close names: bert-base-uncased"):
    fetch.resolve_name("bert-base-uncase")
  folder = tmp_path / "someone" / "model"
  folder.mkdir(parents=True)
  with pytest.raises(InputError, match="convert an HF folder with python -m "
                     "bert_tf.convert_checkpoint --input=%s "
                     "--input_format=hf" % folder):
    fetch.resolve_name(str(folder))


def test_ctrl_c_is_one_line_and_downloading_needs_no_tensorflow(
    tmp_path, serve, tiny_zip):
  # 0.1 s a byte: the 5.9 kB transfer would take ten minutes, so it is
  # still running when the signal comes, however loaded the machine.
  base, _ = serve({_ZIP_PATH: Served(tiny_zip[0], trickle=0.1)})
  env = dict(os.environ, no_proxy="127.0.0.1")
  script = ("import sys; from bert_tf.cli import fetch_model; "
            "sys.argv = ['fetch_model', '--output_dir=%s', '--base_url=%s', "
            "'%s']\ntry:\n  fetch_model.run()\nfinally:\n"
            "  print('tensorflow' in sys.modules, file=sys.stderr)" %
            (tmp_path, base, _NAME))
  # As from a terminal: a shell without job control starts background jobs
  # with SIGINT ignored, and Python then installs no KeyboardInterrupt.
  restore_sigint = lambda: signal.signal(signal.SIGINT, signal.SIG_DFL)
  with subprocess.Popen([sys.executable, "-c", script], cwd=REPO, env=env,
                        stderr=subprocess.PIPE, text=True,
                        preexec_fn=restore_sigint) as process:
    try:
      deadline = time.monotonic() + 60
      part = tmp_path / (_NAME + ".zip.part")
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
  assert len(lines) == 2 and lines[0].startswith("ERROR: %s%s: interrupted; "
                                                 % (base, _ZIP_PATH)), stderr
  assert "kept in %s (the next run resumes)" % part in lines[0]
  assert os.listdir(tmp_path) == [part.name]
