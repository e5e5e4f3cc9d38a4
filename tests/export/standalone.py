"""Calls an exported SavedModel from a fresh Python that has only TensorFlow
and tensorflow_text, as a serving process would (bert_tf is not importable
there; the child asserts it).

Example:
    outputs = serve(export_dir, [{"text_a": ["a"], "text_b": ["b"]}])
    outputs[0]["probabilities"]   # or outputs[0]["error"] for a bad request
"""

import base64
import json
import os
import subprocess
import sys

# The first lines of every serving child: bert_tf cannot be imported there
# (the venv has it installed, so the child blocks it and checks that).
WITHOUT_BERT_TF = r"""
import sys
class NoProject:  # a serving process has no bert_tf (installed here: -e .)
  def find_spec(self, name, path=None, target=None):
    if name.split(".")[0] in ("bert_tf", "data_prep"):
      raise ImportError("not in a serving process: " + name)
sys.meta_path.insert(0, NoProject())
try:
  import bert_tf
  raise AssertionError("bert_tf is importable")
except ImportError:
  pass
"""

# Each request: {input name: list (nested for wrong shapes) of str, or of
# {"b64": ...} for raw bytes}; each answer: {output: nested list} or
# {"error": "<exception class>: <message>"}. The process keeps serving
# after a failed request, which the caller can check.
_CHILD = (
  WITHOUT_BERT_TF
  + r"""
import base64, json
import tensorflow as tf
import tensorflow_text  # registers the tokenizer ops
def value(x):
  if isinstance(x, list):
    return [value(v) for v in x]
  return base64.b64decode(x["b64"]) if isinstance(x, dict) else x.encode()
def plain(x):
  if isinstance(x, list):
    return [plain(v) for v in x]
  return x.decode("utf-8") if isinstance(x, bytes) else x
model = tf.saved_model.load(sys.argv[1])
serving = model.signatures[sys.argv[2]]
answers = []
for request in json.load(sys.stdin):
  try:
    out = serving(**{k: tf.constant(value(v), tf.string)
                     for k, v in request.items()})
    answers.append({k: plain(v.numpy().tolist()) for k, v in out.items()})
  except Exception as e:  # pylint: disable=broad-except
    answers.append({"error": "%s: %s" % (type(e).__name__, e)})
print(json.dumps({"answers": answers,
                  "bert_tf_loaded": "bert_tf" in sys.modules}))
"""
)


def raw_bytes(data):
  """A request value that reaches the model as these exact bytes."""
  return {"b64": base64.b64encode(data).decode("ascii")}


def serve(export_dir, requests, timeout=300, signature="serving_default"):
  """Runs `requests` through `signature` in a fresh process."""
  env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
  env["TF_CPP_MIN_LOG_LEVEL"] = "2"
  # -I: no script folder or user site on sys.path; cwd is not the repo.
  result = subprocess.run(
    [
      sys.executable,
      "-I",
      "-c",
      _CHILD,
      os.path.abspath(export_dir),
      signature,
    ],
    input=json.dumps(requests),
    capture_output=True,
    text=True,
    cwd=os.path.dirname(os.path.abspath(export_dir)),
    env=env,
    timeout=timeout,
    check=False,
  )
  assert result.returncode == 0, result.stderr[-3000:]
  reply = json.loads(result.stdout.splitlines()[-1])
  assert not reply["bert_tf_loaded"]
  return reply["answers"]


def export(tmp_path, name, *args):
  """Runs `python -m bert_tf.export_saved_model`; returns the export dir."""
  from tests.conftest import REPO  # pylint: disable=g-import-not-at-top

  export_dir = tmp_path / name
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
  result = subprocess.run(
    [
      sys.executable,
      "-m",
      "bert_tf.export_saved_model",
      "--export_dir=%s" % export_dir,
    ]
    + list(args),
    cwd=REPO,
    env=env,
    capture_output=True,
    text=True,
    timeout=300,
    check=False,
  )
  assert result.returncode == 0, result.stderr[-3000:]
  return export_dir


def run_child(cwd, script, *args):
  """Runs `script` in `cwd` with only TensorFlow (+ tensorflow_text, keras)
  on the path; returns its last stdout line as JSON."""
  env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
  env["TF_CPP_MIN_LOG_LEVEL"] = "2"
  result = subprocess.run(
    [sys.executable, "-I", "-c", script] + [str(a) for a in args],
    capture_output=True,
    text=True,
    cwd=str(cwd),
    env=env,
    timeout=300,
    check=False,
  )
  assert result.returncode == 0, result.stderr[-3000:]
  return json.loads(result.stdout.splitlines()[-1])
