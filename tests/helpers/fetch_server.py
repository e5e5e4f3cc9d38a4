"""The local HTTP server of the fetch tests (127.0.0.1, with Range
support, able to cut a connection mid-file or to misbehave as `Served`
says) and the tiny original model it serves; the `serve` and `tiny_zip`
fixtures are in tests/checkpoints/conftest.py.

Example:
    data, arrays = tiny_model_zip(NAME)
    base, requests = serve({ZIP_PATH: data})  # the `serve` fixture
    assert_loads(fetch_model(NAME, str(tmp_path), base_url=base), arrays)
"""

import collections
import http.server
import io
import json
import os
import re
import tempfile
import time
import zipfile

import numpy as np

from bert_tf.checkpoints import checkpoint_io
from bert_tf.checkpoints import model_registry
from bert_tf.modeling import pretrained
from bert_tf.modeling.bert_config import BertConfig
from bert_tf.modeling.bert_encoder import BertEncoder

NAME = "uncased_L-2_H-128_A-2"
ZIP_PATH = "/" + model_registry.GOOGLE_MODELS[NAME].path
_CONFIG = {
  "hidden_size": 8,
  "num_hidden_layers": 1,
  "num_attention_heads": 2,
  "intermediate_size": 16,
  "vocab_size": 12,
  "max_position_embeddings": 16,
  "type_vocab_size": 2,
  "hidden_act": "gelu",
  "hidden_dropout_prob": 0.1,
  "attention_probs_dropout_prob": 0.1,
  "initializer_range": 0.02,
}


Served = collections.namedtuple(
  "Served",
  ["data", "headers", "length", "trickle", "redirect"],
  defaults=[(), True, 0.0, None],
)
Served.__doc__ = """A misbehaving response: extra `headers`, no
Content-Length unless `length`, one byte per `trickle` seconds, or a 302 to
`redirect` (carrying the extra headers, as the Hub does)."""


def handler(files, cut, requests, ranges):
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
      match = ranges and re.fullmatch(
        r"bytes=(\d+)-", self.headers.get("Range") or ""
      )
      start = int(match.group(1)) if match else 0
      self.send_response(206 if match else 200)
      if match:
        self.send_header(
          "Content-Range", "bytes %d-%d/%d" % (start, len(data) - 1, len(data))
        )
      for key, value in served.headers:
        self.send_header(key, value)
      if served.length:
        self.send_header("Content-Length", str(len(data) - start))
      self.end_headers()
      body = data[start:]
      if self.path in cut:
        cut.remove(self.path)
        body = body[: len(body) // 2]
      if not served.trickle:
        self.wfile.write(body)
        return
      try:
        for i in range(len(body)):
          self.wfile.write(body[i : i + 1])
          self.wfile.flush()
          time.sleep(served.trickle)
      except OSError:  # the client gave up
        pass

    def log_message(self, *args):
      del args

  return Handler


def tiny_model_zip(top_folder):
  """(zip bytes, {variable name: array}) of a tiny original checkpoint."""
  config = BertConfig.from_dict(_CONFIG)
  arrays = {
    name: variable.numpy()
    for name, variable in checkpoint_io.tf1_name_map(
      BertEncoder(config)
    ).items()
  }
  folder = top_folder + "/" if top_folder else ""
  buffer = io.BytesIO()
  with zipfile.ZipFile(buffer, "w") as zf:
    with tempfile.TemporaryDirectory() as tmp:
      checkpoint_io.save_tf1_checkpoint(
        os.path.join(tmp, "bert_model.ckpt"), arrays
      )
      for name in sorted(os.listdir(tmp)):
        zf.write(os.path.join(tmp, name), folder + name)
    zf.writestr(folder + "bert_config.json", json.dumps(_CONFIG))
    zf.writestr(folder + "vocab.txt", "".join("t%d\n" % i for i in range(12)))
  return buffer.getvalue(), arrays


def assert_loads(model_dir, arrays):
  config = BertConfig.from_json_file(
    os.path.join(model_dir, "bert_config.json")
  )
  encoder, heads, _ = pretrained.load_tf1_model(
    config, os.path.join(model_dir, "bert_model.ckpt")
  )
  loaded = checkpoint_io.tf1_name_map(encoder, **heads)
  assert sorted(loaded) == sorted(arrays)
  for name, value in arrays.items():
    np.testing.assert_array_equal(loaded[name].numpy(), value, err_msg=name)
