"""The files of a run's output_dir beside its engine checkpoints, named once.

  eval_history.jsonl   one JSON object per evaluation during training:
                       `global_step` and the metrics (eval_hook.EvalHook)
  eval/                TensorBoard scalars of those evaluations
  best/                the best model so far (--best_metric):
                       bert_model.ckpt (original format, task head
                       included), bert_config.json, best.json
  early_stopping.json  written when --early_stopping_patience ended training

The writer is `eval_hook.EvalHook`; the readers are the hook itself (on
resume), `--predict_checkpoint=best` (cli/wiring.py), the trainer's
log and `bert-plot-run` (cli/plot_run.py). Paths may be local or remote
(gs://...): they go through `tf.io.gfile`.

Example:
    history = read_history(os.path.join(output_dir, HISTORY_FILE))
    best = read_best(os.path.join(output_dir, BEST_DIR))
    if best:
      print(best["metric"], best["value"], best["global_step"])
"""

import json
import os

import tensorflow as tf

from bert_tf.io_utils import atomic_output
from bert_tf.io_utils import decode_text
from bert_tf.io_utils import InputError

HISTORY_FILE = "eval_history.jsonl"
EVAL_DIR = "eval"
BEST_DIR = "best"
BEST_FILE = "best.json"
BEST_CHECKPOINT = "bert_model.ckpt"
BEST_CONFIG = "bert_config.json"
STOP_FILE = "early_stopping.json"


def _read_text(path):
  """The UTF-8 text of `path`, or None if it does not exist (InputError
  naming path:line for other bytes)."""
  if not tf.io.gfile.exists(path):
    return None
  with tf.io.gfile.GFile(path, "rb") as f:
    return decode_text(f.read(), path)


def parse_json(text, where):
  """json.loads, with an InputError naming `where` for text that is not
  JSON or nests too deeply for Python (RecursionError)."""
  try:
    return json.loads(text)
  except (ValueError, RecursionError) as e:
    raise InputError(
      "%s: not JSON (%s)"
      % (where, e if isinstance(e, ValueError) else "nested too deeply")
    ) from None


def read_json(path):
  """The object of a JSON file, or None if it does not exist."""
  text = _read_text(path)
  return None if text is None else parse_json(text, path)


def write_json(path, obj):
  """Writes `obj` as indented JSON, atomically."""
  with atomic_output(path) as f:
    f.write(json.dumps(obj, indent=2) + "\n")


def read_history(path):
  """The records of an eval_history.jsonl file; [] if it does not exist.

  Raises:
    InputError: naming the file and line of a record that is not a JSON
      object with an integer `global_step`.
  """
  text = _read_text(path)
  records = []
  for line_number, line in enumerate((text or "").splitlines(), 1):
    if not line.strip():
      continue
    record = parse_json(line, "%s line %d" % (path, line_number))
    step = record.get("global_step") if isinstance(record, dict) else None
    if not isinstance(step, int) or isinstance(step, bool):
      raise InputError(
        "%s line %d: no integer global_step" % (path, line_number)
      )
    records.append(record)
  return records


def write_history(path, records):
  """Rewrites eval_history.jsonl atomically (no torn last line)."""
  with atomic_output(path) as f:
    f.writelines(json.dumps(record) + "\n" for record in records)


def read_best(best_dir):
  """best/best.json ({"metric", "mode", "value", "global_step",
  "metrics"}), or None without one."""
  path = os.path.join(best_dir, BEST_FILE)
  best = read_json(path)
  if best is None:
    return None
  try:
    int(best["global_step"]), float(best["value"])
    str(best["metric"]), str(best["mode"])
  except (ValueError, KeyError, TypeError, IndexError) as e:
    raise InputError(
      "%s: not a best-checkpoint record (%s)" % (path, e)
    ) from None
  return best


def read_stopped(path):
  """early_stopping.json ({"global_step", ...}), or None without one."""
  stopped = read_json(path)
  if stopped is not None and not (
    isinstance(stopped, dict) and isinstance(stopped.get("global_step"), int)
  ):
    raise InputError(
      "%s: not an early-stopping record (no integer global_step)" % path
    )
  return stopped
