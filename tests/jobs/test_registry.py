"""bert_tf/jobs/registry.py lists every task completely: each named piece
exists, and every head, exporter, data_prep folder, Job, script and console
script of the tree belongs to a task (or is listed as shared)."""

import importlib
import tomllib

from bert_tf.export import registered_exporters
from bert_tf.jobs.registry import SHARED_DATA_PREP
from bert_tf.jobs.registry import SHARED_EXPORTERS
from bert_tf.jobs.registry import TASKS
from bert_tf.modeling.heads import registered_heads
from bert_tf.records import task_schemas
from tests.conftest import REPO


def _resolve(dotted):
  module, name = dotted.rsplit(".", 1)
  return getattr(importlib.import_module(module), name)


def test_every_named_piece_exists():
  for name, task in TASKS.items():
    for dotted in (task.task, task.job, task.api):
      if dotted:
        assert isinstance(_resolve(dotted), type), (name, dotted)
    if task.schema:
      assert callable(getattr(task_schemas, task.schema)), name
    assert (REPO / task.data_prep.replace(".", "/")).is_dir(), name
    assert (REPO / task.script).is_file(), name


def test_every_head_and_exporter_belongs_to_a_task():
  heads = [h for task in TASKS.values() for h in task.heads]
  assert sorted(heads) == sorted(registered_heads())
  exporters = [t.exporter for t in TASKS.values()] + list(SHARED_EXPORTERS)
  assert sorted(exporters) == sorted(registered_exporters())


def test_every_data_prep_folder_job_and_script_belongs_to_a_task():
  folders = {
    "data_prep." + p.name
    for p in (REPO / "data_prep").iterdir()
    if (p / "__init__.py").exists()
  }
  listed = {t.data_prep for t in TASKS.values()}
  assert folders == listed | set(SHARED_DATA_PREP)
  jobs = {
    "bert_tf.jobs.%s.%s" % (path.stem, name)
    for path in (REPO / "bert_tf" / "jobs").glob("*.py")
    for name in vars(importlib.import_module("bert_tf.jobs." + path.stem))
    if name.endswith("Job") and name != "Job"
  }
  assert jobs == {t.job for t in TASKS.values()}
  scripts = {p.name for p in REPO.glob("run_*.py")} | {"extract_features.py"}
  assert scripts == {t.script for t in TASKS.values()}


def test_every_task_console_script_is_listed():
  with open(REPO / "pyproject.toml", "rb") as f:
    scripts = tomllib.load(f)["project"]["scripts"]
  # The commands that serve every task: checkpoints, export, predict,
  # plots and the vocabulary learner.
  shared = {
    name
    for name, target in scripts.items()
    if target.startswith(("bert_tf.cli.", "data_prep.learn_vocab"))
  }
  listed = [c for t in TASKS.values() for c in t.console_scripts]
  assert sorted(listed) == sorted(set(scripts) - shared)
