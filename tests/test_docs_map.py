"""The map matches the territory: the README lists every console script of
pyproject.toml, and docs/architecture.md names every package of bert_tf/ and
data_prep/, every registered head and every task's Job and script (the
registry's test checks the console scripts)."""

import re
import tomllib

from bert_tf.jobs.registry import TASKS
from tests.conftest import REPO


def _scripts():
  with open(REPO / "pyproject.toml", "rb") as f:
    return tomllib.load(f)["project"]["scripts"]


def _section(text, heading):
  start = text.index(heading)
  end = text.find("\n## ", start + len(heading))
  return text[start : end if end >= 0 else len(text)]


def test_the_readme_script_table_lists_every_console_script():
  table = _section((REPO / "README.md").read_text(), "## Scripts\n")
  listed = set(re.findall(r"^\| [^|]+ \| `(bert-[a-z-]+)` \|", table, re.M))
  assert listed == set(_scripts())


def test_the_architecture_names_every_package_head_and_task_script():
  text = (REPO / "docs" / "architecture.md").read_text()
  packages = [
    "bert_tf/%s/" % p.name
    for p in (REPO / "bert_tf").iterdir()
    if (p / "__init__.py").exists()
  ]
  packages += [
    "%s/" % p.name
    for p in (REPO / "data_prep").iterdir()
    if (p / "__init__.py").exists()
  ]
  assert [p for p in packages if "`%s" % p not in text] == []
  heads = re.findall(
    r'@register_head\("(\w+)"\)',
    "".join(
      p.read_text() for p in (REPO / "bert_tf/modeling/heads").glob("*.py")
    ),
  )
  layers = _section(text, "## One task, its names in every layer")
  assert heads and [h for h in heads if "`%s`" % h not in layers] == []
  # Every task of the registry, by its Job and script.
  for task in TASKS.values():
    job = ".".join(task.job.split(".")[-2:])
    assert "`%s`" % job in layers and "`%s`" % task.script in layers, job
