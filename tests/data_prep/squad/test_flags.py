"""The SQuAD CLIs share one definition of their common flags, and one
decision on whether a predict file can be scored."""

import json
import os
import subprocess
import sys

import pytest

from data_prep.squad.evaluation import is_scorable
from tests.conftest import REPO

# The original run_squad.py defaults.
SHARED = {
  "doc_stride": 128,
  "max_query_length": 64,
  "version_2_with_negative": False,
  "n_best_size": 20,
  "max_answer_length": 30,
  "null_score_diff_threshold": 0.0,
}

_DEFAULTS = r"""
import importlib, json, sys
from absl import flags
importlib.import_module(sys.argv[1]).define_flags()
print(json.dumps({n: [flags.FLAGS[n].default, flags.FLAGS[n].help,
                      flags.FLAGS.find_module_defining_flag(n)]
                  for n in json.loads(sys.argv[2]) if n in flags.FLAGS}))
"""


def _flags(module):
  result = subprocess.run(
    [sys.executable, "-c", _DEFAULTS, module, json.dumps(list(SHARED))],
    cwd=REPO,
    capture_output=True,
    text=True,
    timeout=120,
    check=True,
  )
  return json.loads(result.stdout.splitlines()[-1])


@pytest.mark.process
def test_cli_flags_come_from_squad_flags():
  featurize = _flags("data_prep.squad.__main__")
  rescore = _flags("data_prep.squad.predictions")
  assert sorted(featurize) == [
    "doc_stride",
    "max_query_length",
    "version_2_with_negative",
  ]
  assert sorted(rescore) == sorted(SHARED)
  for name, (default, text, module) in rescore.items():
    assert default == SHARED[name] and module == "data_prep.squad.flags"
    assert featurize.get(name, [default, text, module]) == [
      default,
      text,
      module,
    ]


def _data(*answers):
  return [
    {
      "paragraphs": [
        {
          "context": "c",
          "qas": [
            dict(
              {"id": str(i), "question": "q"},
              **({} if a is None else {"answers": a}),
            )
            for i, a in enumerate(answers)
          ],
        }
      ]
    }
  ]


def test_is_scorable():
  gold = [{"text": "c", "answer_start": 0}]
  assert is_scorable(_data(gold, gold), False)
  assert not is_scorable(_data(gold, None), False)  # a test file
  # Empty lists are unanswerable v2 questions; v1 cannot score them.
  assert is_scorable(_data(gold, []), True)
  assert not is_scorable(_data(gold, []), False)


_WORKERS = r"""
import os, sys
from absl import flags
os.sched_setaffinity(0, {int(c) for c in sys.argv[1].split(",")})
from data_prep.squad import __main__ as squad_main
squad_main.define_flags()
print(flags.FLAGS["num_workers"].default, flags.FLAGS["num_workers"].help)
"""


@pytest.mark.process
def test_num_workers_defaults_to_the_cores_available():
  """One core allowed: no pool; more: one worker per core; --help says so.
  (Pool and single process write the same bytes: test_features.py.)"""
  cores = sorted(os.sched_getaffinity(0))
  for allowed in ([cores[0]], cores):
    result = subprocess.run(
      [sys.executable, "-c", _WORKERS, ",".join(map(str, allowed))],
      cwd=REPO,
      capture_output=True,
      text=True,
      timeout=120,
      check=True,
    )
    default, help_text = result.stdout.splitlines()[-1].split(" ", 1)
    assert int(default) == min(len(allowed), 8)
    assert "cores available to this process" in help_text
