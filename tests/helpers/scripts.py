"""Drives a run_*.py script's main() in-process for flag and input tests.

Example:
    outcomes, defaults = run_mains("run_squad", [["--do_train"], []])
    code, stderr = outcomes[0]
"""

import json
import os
import subprocess
import sys

from tests.conftest import REPO

# Runs main() once per argv in one process (TF loads once), through the
# same wrapper as the command line (flag ranges, one-line errors); prints
# [exit code, stderr] of each and the flag defaults.
_DRIVER = r"""
import contextlib, importlib, io, json, sys
from absl import flags
from bert_tf.cli.app import guarded
script = importlib.import_module(sys.argv[1])
out = []
for argv in json.loads(sys.argv[2]):
  flags.FLAGS.unparse_flags()
  flags.FLAGS([sys.argv[1] + ".py"] + argv)
  err = io.StringIO()
  code = 0
  with contextlib.redirect_stderr(err):
    try:
      guarded(script.main)([])
    except SystemExit as e:
      code = e.code
  out.append([code, err.getvalue()])
defaults = {name: flags.FLAGS[name].default for name in flags.FLAGS}
print(json.dumps([out, defaults]))
"""


def run_mains(script, argvs):
  """Runs `script.main` (e.g. "run_squad") once per argv in a fresh process.

  Returns:
    ([[exit code, stderr], ...] in argv order, {flag name: default}).
  """
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
  result = subprocess.run(
      [sys.executable, "-c", _DRIVER, script, json.dumps(argvs)], cwd=REPO,
      env=env, capture_output=True, text=True, timeout=120, check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  return json.loads(result.stdout.splitlines()[-1])
