"""The program runner every entry point starts through.

`run_app(main)` is `absl.app.run` with what every command of ours needs:
- flags that do not parse, or are outside the range declared where they are
  defined (`flag_checks`), end in one `ERROR:` line (absl prints several);
- `--help` / `--helpshort` list the command's own flags and the shared ones
  it uses, however it was started (`python run_x.py`, `python ./run_x.py`,
  `python /abs/run_x.py`, `python -m ...`, a `bert-*` console script: absl
  lists only the key flags of the module named by argv[0]);
- before `main`: outputs that would overwrite an input, flags given
  without what they need (`flag_needs`), and output locations that cannot
  be written;
- any expected failure in `main` becomes one `ERROR:` line and exit status 1
  (`io_utils.run_cli`).

TensorFlow-free (data_prep uses it), so `--help` answers at once.

Example:
    def run():
      define_flags()
      app.run_app(main)
"""

import importlib
import os
import sys

from absl import app
from absl import flags

from bert_tf.io_utils import run_cli
from bert_tf.runtime import flag_checks
from bert_tf.runtime import flag_needs
from bert_tf.runtime import quiet

# The folder holding bert_tf/, data_prep/ and the root scripts (the
# repository, or site-packages when installed).
_PROJECT_ROOT = os.path.dirname(
  os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
)


def _module_file(module_name):
  """The file of a module name as absl records it (a dotted name, or
  argv[0]'s path for `__main__`)."""
  module = sys.modules.get(module_name)
  path = getattr(module, "__file__", None) or module_name
  return os.path.realpath(path) if os.path.exists(path) else None


class _LazyModule:
  """Module `name`, imported on its first attribute access."""

  def __init__(self, name):
    self._name = name
    self._module = None

  def __getattr__(self, attr):
    if self._module is None:
      self._module = importlib.import_module(self._name)
    return getattr(self._module, attr)


def lazy_import(name):
  """Module `name`, imported on first use. Entry points import their
  TensorFlow / scikit-learn modules this way, so that `--help` and flag
  errors answer in a second, not after loading TensorFlow, and TensorFlow
  loads through `quiet` (nothing is looked up before first use)."""
  return _LazyModule(name)


def is_project_flag(flag_values, name):
  """Whether the flag `name` was defined by a module of this project (not by
  absl, TensorFlow or another library), however the program was started."""
  module = flag_values.find_module_defining_flag(name)
  if not module:
    return False
  if module.split(".")[0] in ("bert_tf", "data_prep", "benchmarks"):
    return True
  path = _module_file(module)
  return path is not None and (
    os.path.dirname(path) == _PROJECT_ROOT
    or path.startswith(
      tuple(
        os.path.join(_PROJECT_ROOT, package) + os.sep
        for package in ("bert_tf", "data_prep")
      )
    )
  )


def project_flags(flag_values):
  """Names of the flags the project defines in this program (aliases
  excluded)."""
  return sorted(
    name
    for name in flag_values
    if name == flag_values[name].name and is_project_flag(flag_values, name)
  )


def numeric_flags(flag_values):
  """Names of the project's integer/float flags in this program."""
  return [
    name
    for name in project_flags(flag_values)
    if flag_values[name].flag_type() in ("int", "float")
  ]


def _help_as_the_command(flag_values, main):
  """Makes every project flag a key flag of the main module (what
  `--helpshort` lists) and, for a console script, the command module's
  docstring the usage text (absl prints `__main__`'s)."""
  for name in project_flags(flag_values):
    flag_values.register_key_flag_for_module(sys.argv[0], flag_values[name])
  main_module = sys.modules.get("__main__")
  command = sys.modules.get(getattr(main, "__module__", ""))
  if main_module is not None and not getattr(main_module, "__doc__", None):
    main_module.__doc__ = getattr(command, "__doc__", None)


def guarded(main):
  """`main` after the flag checks, inside `run_cli`'s one-line errors."""

  def checked(argv):
    # An output over an input is named first: it would destroy data.
    flag_checks.check_outputs_are_not_inputs(flags.FLAGS)
    flag_needs.check(flags.FLAGS)
    flag_checks.check_output_locations(flags.FLAGS)
    return main(argv)

  return run_cli(checked)


_HELP_FLAGS = (
  "--help",
  "-help",
  "-h",
  "-?",
  "--helpshort",
  "--helpfull",
  "--helpxml",
)


def parse_flags(argv, known_only=False):
  """absl's flag parsing, but a bad flag (unknown, or a value that does not
  parse) ends as one `ERROR:` line and exit status 1. `known_only` leaves
  unknown arguments in the returned argv (for Beam's options)."""
  try:
    return flags.FLAGS(argv, known_only=known_only)
  except flags.Error as e:
    sys.stderr.write("ERROR: %s\n" % " ".join(str(e).split()))
    sys.exit(1)
  except SystemExit as e:
    # absl ends --help / --helpshort / --helpfull with status 1; asked-for
    # help is a success.
    asked = any(arg.split("=")[0] in _HELP_FLAGS for arg in argv[1:])
    sys.exit(0 if asked and e.code == 1 else e.code)


def run_app(main, flags_parser=parse_flags, define_flags=None):
  """`app.run` for every entry point: help, the flag checks, then `main`.
  `flags_parser`: `parse_flags`, or one that leaves some arguments to
  `main`. `define_flags`: the command's flag definitions when they need
  TensorFlow (export's task options), run once the console is quiet."""
  quiet.quiet_tensorflow()  # Before anything imports TensorFlow.
  if define_flags is not None:
    define_flags()
  _help_as_the_command(flags.FLAGS, main)
  app.run(guarded(main), flags_parser=flags_parser)
