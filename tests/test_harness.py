"""The test harness stays in one place: test modules share code only through
tests/helpers/ (or a package's non-test module), never by importing another
test module, whose tests would then run twice and whose private names would
become an interface."""

import ast
import pathlib

TESTS = pathlib.Path(__file__).parent


def _is_test_module(name):
  parts = name.split(".")
  return parts[0] == "tests" and any(p.startswith("test_") for p in parts)


def _imported_test_modules(tree):
  """The test modules an import names (`from tests.x import test_y` too)."""
  found = []
  for node in ast.walk(tree):
    if isinstance(node, ast.Import):
      found += [alias.name for alias in node.names]
    elif isinstance(node, ast.ImportFrom) and node.module:
      found += (
        [node.module]
        if _is_test_module(node.module)
        else [node.module + "." + alias.name for alias in node.names]
      )
  return sorted({name for name in found if _is_test_module(name)})


def test_no_test_module_imports_another():
  offenders = []
  for path in sorted(TESTS.rglob("*.py")):
    tree = ast.parse(path.read_text(), str(path))
    offenders += [
      "%s imports %s" % (path.relative_to(TESTS), name)
      for name in _imported_test_modules(tree)
    ]
  assert not offenders, "move what they share to tests/helpers/: %s" % (
    offenders
  )


def test_the_check_sees_both_import_forms():
  tree = ast.parse(
    "from tests.scripts import test_run_ner\n"
    "import tests.helpers.cli\n"
    "from tests.hostile.test_tracebacks import _tmpfs\n"
  )
  assert _imported_test_modules(tree) == [
    "tests.hostile.test_tracebacks",
    "tests.scripts.test_run_ner",
  ]
