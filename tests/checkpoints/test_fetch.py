"""Models by name, against a local HTTP server on 127.0.0.1 (with Range
support, and able to cut a connection mid-file) serving a tiny original zip
and a tiny HuggingFace folder."""

import hashlib
import http.server
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
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
from tests.checkpoints.test_hf_import import _tiny_hf_model
from tests.conftest import REPO

_NAME = "uncased_L-2_H-128_A-2"
_ZIP_PATH = "/" + model_registry.GOOGLE_MODELS[_NAME].path
_CONFIG = {"hidden_size": 8, "num_hidden_layers": 1, "num_attention_heads": 2,
           "intermediate_size": 16, "vocab_size": 12,
           "max_position_embeddings": 16, "type_vocab_size": 2,
           "hidden_act": "gelu", "hidden_dropout_prob": 0.1,
           "attention_probs_dropout_prob": 0.1, "initializer_range": 0.02}


def _handler(files, cut, requests, ranges):
  """Serves `files` (URL path -> bytes); a path in `cut` gets half of its
  body once, then the connection closes; Range is ignored unless `ranges`."""

  class Handler(http.server.BaseHTTPRequestHandler):

    def do_GET(self):  # pylint: disable=invalid-name
      requests.append((self.path, self.headers.get("Range")))
      data = files.get(self.path)
      if data is None:
        self.send_error(404)
        return
      match = ranges and re.fullmatch(r"bytes=(\d+)-",
                                      self.headers.get("Range") or "")
      start = int(match.group(1)) if match else 0
      self.send_response(206 if match else 200)
      if match:
        self.send_header("Content-Range", "bytes %d-%d/%d" %
                         (start, len(data) - 1, len(data)))
      self.send_header("Content-Length", str(len(data) - start))
      self.end_headers()
      body = data[start:]
      if self.path in cut:
        cut.remove(self.path)
        body = body[:len(body) // 2]
      self.wfile.write(body)

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
  _tiny_hf_model(str(hf_dir))
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
