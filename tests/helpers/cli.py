"""The in-process CLI driver: runs any entry point's `main` as its command
line does, many argvs of many entry points in one process (TF loads once).

Each case goes through `app.guarded` (flag ranges, output checks, then `main`
inside `run_cli`'s one-line errors), with stderr and absl logs captured.

Example:
    outcomes = run_cases([("run_squad", ["--train_batch_size=0"]),
                          ("data_prep.squad", ["--doc_stride=-1"])])
    assert_one_error(outcomes[0], "--train_batch_size=0")
    outcomes, defaults = run_mains("run_squad", [["--do_train"], []])
"""

import json
import os
import subprocess
import sys
import tomllib

from tests.conftest import REPO


def _entry_points(repo=REPO):
  """{entry point: the module holding its `main`}, one per console script
  of pyproject.toml. An entry point is named as it is typed after
  `python -m` (or the root script's module): the command module's name
  without `.__main__`, or the name of the one-line shim that forwards to it
  (`bert_tf.predict` -> `bert_tf.cli.predict`)."""
  with open(repo / "pyproject.toml", "rb") as f:
    scripts = tomllib.load(f)["project"]["scripts"]
  shims = {}
  for path in list((repo / "bert_tf").glob("*.py")) + list(
    (repo / "data_prep").glob("*.py")
  ):
    for line in path.read_text().splitlines():
      if line.startswith("from ") and line.endswith(" import run"):
        shims[line.split()[1]] = "%s.%s" % (path.parent.name, path.stem)
  modules = sorted({target.split(":")[0] for target in scripts.values()})
  return {shims.get(m, m.removesuffix(".__main__")): m for m in modules}


ENTRY_POINTS = _entry_points()

# Queries a case may make instead of an argv: the entry point's numeric flag
# names, {flag name: default}, or its project flags with their declared
# dependencies (`flag_needs`).
NUMERIC = "NUMERIC"
DEFAULTS = "DEFAULTS"
NEEDS = "NEEDS"

# Loads one entry point's flags at a time (dropping the previous one's and
# re-importing, since scripts define flags at import), runs each case and
# prints [[exit code, stderr], ...]. An escaped exception is reported with
# its traceback, so the checks see it.
_DRIVER = r"""
import contextlib, importlib, io, json, logging, sys, traceback
from absl import flags
from absl import logging as absl_logging
from bert_tf.runtime import app
from bert_tf.runtime import flag_checks
from bert_tf.runtime import flag_needs
ENTRY_POINTS, NUMERIC, DEFAULTS, NEEDS = json.loads(sys.argv[1])
FLAGS = flags.FLAGS
BUILTIN = set(FLAGS)
loaded = None

def load(entry):
  global loaded
  if loaded == entry:
    return sys.modules[ENTRY_POINTS[entry]]
  for name in set(FLAGS) - BUILTIN:
    delattr(FLAGS, name)
  sys.modules.pop(ENTRY_POINTS[entry], None)
  module = importlib.import_module(ENTRY_POINTS[entry])
  if hasattr(module, "define_flags"):
    module.define_flags()
  loaded = entry
  return module

out = []
for entry, argv in json.loads(sys.argv[2]):
  module = load(entry)
  if argv == NUMERIC:
    ranges = {n: flag_checks.declared_range(FLAGS[n])
              for n in app.numeric_flags(FLAGS)}
    out.append([0, json.dumps({
        n: r and [r.low, r.high, r.low_open] for n, r in ranges.items()})])
    continue
  if argv == NEEDS:
    out.append([0, json.dumps({n: {
        "type": FLAGS[n].flag_type(), "default": FLAGS[n].default,
        "enum": getattr(FLAGS[n].parser, "enum_values", None),
        "range": (lambda r: r and [r.low, r.high, r.low_open])(
            flag_checks.declared_range(FLAGS[n])),
        "rules": [[r.subject, r.needs, r.excludes, r.warn]
                  for r in flag_needs.declared(FLAGS[n])]}
        for n in app.project_flags(FLAGS)}, default=str)])
    continue
  if argv == DEFAULTS:
    out.append([0, json.dumps({n: FLAGS[n].default for n in FLAGS},
                              default=str)])
    continue
  FLAGS.unparse_flags()
  err = io.StringIO()
  handler = logging.StreamHandler(err)
  absl_logging.get_absl_logger().addHandler(handler)
  code = 0
  with contextlib.redirect_stderr(err):
    try:
      app.parse_flags([entry] + argv)  # ranges: one line at parsing
      app.guarded(module.main)([])
    except SystemExit as e:
      code = e.code
    except BaseException:  # pylint: disable=broad-except
      code = "escaped"
      traceback.print_exc()
  absl_logging.get_absl_logger().removeHandler(handler)
  out.append([code, err.getvalue()])
print(json.dumps(out))
"""


def run_cases(cases, timeout=300):
  """[(entry point, argv or a query), ...] -> [(exit code, stderr), ...]."""
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
  result = subprocess.run(
    [
      sys.executable,
      "-c",
      _DRIVER,
      json.dumps([ENTRY_POINTS, NUMERIC, DEFAULTS, NEEDS]),
      json.dumps(
        [
          [entry, argv if argv in (NUMERIC, DEFAULTS, NEEDS) else list(argv)]
          for entry, argv in cases
        ]
      ),
    ],
    cwd=REPO,
    env=env,
    capture_output=True,
    text=True,
    timeout=timeout,
    check=False,
  )
  assert result.returncode == 0, result.stderr[-3000:]
  return [tuple(o) for o in json.loads(result.stdout.splitlines()[-1])]


def run_mains(entry, argvs, timeout=300):
  """One entry point, many argvs: ([(exit code, stderr), ...] in argv order,
  {flag name: default})."""
  outcomes = run_cases(
    [(entry, argv) for argv in argvs] + [(entry, DEFAULTS)], timeout
  )
  return outcomes[:-1], json.loads(outcomes[-1][1])


def numeric_flags(entries=tuple(ENTRY_POINTS)):
  """{entry point: {its integer/float flag name: [low, high, low_open] of
  the range declared where it is defined, or None}}."""
  outcomes = run_cases([(entry, NUMERIC) for entry in entries])
  return {
    entry: json.loads(text) for entry, (_, text) in zip(entries, outcomes)
  }


def assert_one_error(outcome, *culprits, name=""):
  """Non-zero exit, no traceback, exactly one `ERROR:` line, and that line
  names every culprit (a path, flag, key or file:line)."""
  code, stderr = outcome
  assert code not in (0, "escaped"), (name, code, stderr[-2000:])
  assert "Traceback" not in stderr, (name, stderr[-2000:])
  errors = [l for l in stderr.splitlines() if l.startswith("ERROR:")]
  assert len(errors) == 1, (name, stderr[-2000:])
  for culprit in culprits:
    assert str(culprit) in errors[0], (name, culprit, errors[0])
  assert ".tmp-" not in errors[0], (name, errors[0])
  return errors[0]
