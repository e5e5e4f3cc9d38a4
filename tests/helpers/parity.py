"""API-vs-script parity: a run_*.py script predicting from a run folder, its
eval_results.txt, and the comparison with the API's `evaluate`.

Example:
    run_script("run_ner.py", run, "--do_eval", "--eval_file=%s" % dev)
    script = results_txt(run / "eval_results.txt")
    assert_same_txt(script, tagger.evaluate(words, tags))
"""

import pytest

from bert_tf.tasks.result_files import format_value
from tests.helpers import processes


def run_script(script, run, *args):
  """`script` with the run folder as --output_dir (its vocab and config)."""
  result = processes.run(
    [
      script,
      "--output_dir=%s" % run,
      "--vocab_file=%s/vocab.txt" % run,
      "--bert_config_file=%s/bert_config.json" % run,
      "--noprogress",
      *args,
    ]
  )
  assert result.returncode == 0, result.stderr[-3000:]


def convert_hf(model, output_dir):
  """The original-format checkpoint of HF folder `model` in `output_dir`
  (`convert_checkpoint --input_format=hf`), for the scripts' side."""
  converted = processes.run(
    [
      "-m",
      "bert_tf.convert_checkpoint",
      "--input_format=hf",
      "--input=%s" % model,
      "--output_dir=%s" % output_dir,
    ]
  )
  assert converted.returncode == 0, converted.stderr[-3000:]
  return output_dir


def results_txt(path):
  """{key: value text} of an eval_results.txt."""
  return dict(line.split(" = ") for line in path.read_text().splitlines())


def assert_same_txt(script, api):
  """eval_results.txt lines against the API's values printed the same way
  (float32 `str`); losses within float32 rounding."""
  assert set(script) == set(api), (sorted(script), sorted(api))
  for key, text in script.items():
    if key.endswith("loss"):
      assert float(text) == pytest.approx(api[key], rel=1e-5), key
    else:
      assert text == format_value(api[key]), (key, text, api[key])


def side_by_side(title, script, api):
  """A table of both sides' values (shown by `pytest -s`)."""
  lines = ["%s: %-22s %-20s %s" % (title, "metric", "script", "API")]
  for key in sorted(set(script) | set(api)):
    lines.append(
      "  %-22s %-20s %s" % (key, script.get(key, "-"), api.get(key, "-"))
    )
  return "\n".join(lines)
