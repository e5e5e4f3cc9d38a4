"""raw_results.jsonl: the model's start/end logits per feature, written by
run_squad.py --do_predict and re-scored by `python -m
data_prep.squad_predictions`, with the feature settings beside them so that
re-scoring with other windows is refused.

Example:
    write_raw_results(path, results, {"max_seq_length": 384, ...})
    results = read_raw_results(path, seq_length=384)
"""

import collections
import json
import os

from bert_tf.io_utils import atomic_output
from bert_tf.io_utils import InputError

RawResult = collections.namedtuple(
  "RawResult", ["unique_id", "start_logits", "end_logits"]
)


def write_raw_results(path, results, settings=None):
  """raw_results.jsonl: one {"unique_id", "start_logits", "end_logits"} a
  line; plus `settings_path(path)` holding the feature `settings`
  (max_seq_length, doc_stride, max_query_length) and the feature count, so
  that re-scoring with other windows is refused (`check_raw_results`)."""
  count = 0
  with atomic_output(path) as f:
    for r in results:
      count += 1
      f.write(
        json.dumps(
          {
            "unique_id": int(r.unique_id),
            "start_logits": [float(x) for x in r.start_logits],
            "end_logits": [float(x) for x in r.end_logits],
          }
        )
        + "\n"
      )
  if settings is not None:
    with atomic_output(settings_path(path)) as f:
      f.write(
        json.dumps(dict(settings, num_features=count), sort_keys=True) + "\n"
      )


def settings_path(raw_results_path):
  return raw_results_path + ".settings.json"


def check_raw_results(path, results, settings, features):
  """InputError unless `results` (read from `path`) were made from the same
  windows as `features` made with `settings`: misaligned logits would be
  re-scored silently."""
  recorded = {}
  if os.path.isfile(settings_path(path)):
    try:
      with open(settings_path(path), "rb") as f:
        recorded = json.loads(f.read().decode("utf-8"))
    except (OSError, ValueError) as e:
      raise InputError("%s: unreadable (%s)" % (settings_path(path), e)) from e
  for name, value in sorted(settings.items()):
    if name in recorded and recorded[name] != value:
      raise InputError(
        "%s was made with --%s=%s, not %s: use the same "
        "feature settings" % (path, name, recorded[name], value)
      )
  ids = {r.unique_id for r in results}
  if len(results) != len(features) or ids != {f.unique_id for f in features}:
    raise InputError(
      "%s holds %d results but --predict_file gives %d "
      "features: not the same file or feature settings"
      % (path, len(results), len(features))
    )


def _raw_result(line, seq_length):
  record = json.loads(line)
  unique_id = record["unique_id"]
  start, end = record["start_logits"], record["end_logits"]
  if not isinstance(unique_id, int) or isinstance(unique_id, bool):
    raise ValueError("unique_id is not an integer")
  for name, logits in (("start_logits", start), ("end_logits", end)):
    if not isinstance(logits, list) or not all(
      isinstance(x, (int, float)) for x in logits
    ):
      raise ValueError("%s is not a list of numbers" % name)
    if seq_length is not None and len(logits) != seq_length:
      raise ValueError(
        "%s has %d values, expected max_seq_length %d"
        % (name, len(logits), seq_length)
      )
  return RawResult(
    unique_id, [float(x) for x in start], [float(x) for x in end]
  )


def read_raw_results(path, seq_length=None):
  """Reads raw_results.jsonl -> [RawResult] (logits as Python floats)."""
  results = []
  with open(path, "rb") as f:
    for line_number, line in enumerate(f, 1):
      try:
        results.append(_raw_result(line, seq_length))
      except (ValueError, KeyError, TypeError) as e:
        raise InputError(
          "%s line %d: bad raw result (%s)" % (path, line_number, e)
        ) from None
  return results
