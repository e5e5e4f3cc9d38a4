"""The documentation points at things that exist.

For README.md, benchmarks/README.md and every docs/*.md page:

- every relative markdown link `[text](path#anchor)` names a file or folder
  (relative to the page), and its anchor a heading of the target page;
- every backticked repo path (`examples/demo.sh`, `bert_tf/modeling/...py`,
  `run_squad.py`, `tests/...py::test_name`, ...) exists;
- every command of a fenced code block, and every `python`, `make` or `bash`
  command in backticks, names something that exists: `python X.py` a file,
  `python -m bert_tf.*` / `data_prep.*` / `benchmarks.*` a module of the
  repository, `bert-*` a console script of pyproject.toml, `make X` a
  Makefile target, `bash X` a file.

The pages are only read: no program runs and TensorFlow is not imported.
"""

import os
import pathlib
import re
import tomllib

import pytest

from tests.conftest import REPO

# Top-level folders: a backticked path starting with one of them is a path
# from the repository root.
_TOP_FOLDERS = (
  "benchmarks",
  "bert_tf",
  "data_prep",
  "docs",
  "examples",
  "tests",
)
# Packages whose modules `python -m` must find in the repository; other
# modules (`pip`, `build`, `pytest`) are third-party.
_PACKAGES = ("benchmarks", "bert_tf", "data_prep")
# Suffixes of repository files; a dotted last component without one is a
# module attribute (`data_prep/pretraining/shards.build_shard`).
_FILE_SUFFIXES = (
  ".py",
  ".md",
  ".sh",
  ".json",
  ".txt",
  ".png",
  ".toml",
  ".ini",
  ".cfg",
  ".csv",
  ".tsv",
  ".jsonl",
)
# Spans that are not repository paths: placeholders (`<run>/...`,
# `models/<owner>--<name>`, `$BERT_DIR/...`, `~/.cache/...`, `...`), globs
# (`run_*.py`, `tasks/*`), calls and lists (`cli/quiet.quiet_tensorflow()`,
# `[batch, labels]`) and prose with spaces.
_NOT_A_PATH = re.compile(r"[\s<>$~*{}()\[\]|,]|\.\.\.|…")
# Paths outside the repository: run outputs (`out/`), absolute paths
# (`/tmp/...`, `/models/...`) and the shared data next to the repository.
_OUTSIDE = ("out/", "/", "../shared")
# Fenced blocks in these languages hold code or data, not shell commands.
_NOT_SHELL = ("python", "py", "json")

_FENCE = re.compile(r"^\s*```")
_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
_INLINE_CODE = re.compile(r"`([^`]+)`")
_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_MAKE_TARGET = re.compile(
  r"^([A-Za-z0-9][^:=\s]*(?:[ \t]+[^:=\s]+)*)[ \t]*:"
  r"(?!=)",
  re.M,
)


def _pages():
  pages = [REPO / "README.md", REPO / "benchmarks" / "README.md"]
  return pages + sorted((REPO / "docs").glob("*.md"))


def _split(text):
  """(prose, code blocks) of a markdown text. The prose is the text with
  every fenced block's lines emptied (line numbers kept); a block is
  (language, [(line number, line)])."""
  prose, blocks, block = [], [], None
  for number, line in enumerate(text.splitlines(), 1):
    if block is None and _FENCE.match(line):
      block = (line.strip()[3:].strip().lower(), [])
      prose.append("")
    elif block is not None and line.strip() == "```":
      blocks.append(block)
      block = None
      prose.append("")
    elif block is not None:
      block[1].append((number, line))
      prose.append("")
    else:
      prose.append(line)
  return "\n".join(prose), blocks


def _anchors(text):
  """The anchors GitHub gives the headings of a markdown text."""
  anchors, counts = set(), {}
  for line in _split(text)[0].splitlines():
    heading = _HEADING.match(line)
    if heading:
      slug = re.sub(r"[^\w\- ]", "", heading.group(1).lower())
      slug = slug.replace(" ", "-")
      count = counts.get(slug, 0)
      counts[slug] = count + 1
      anchors.add(slug if count == 0 else "%s-%d" % (slug, count))
  return anchors


def _repo_files(repo):
  """Every file of the repository, as paths relative to it."""
  files = set()
  for folder, subfolders, names in os.walk(repo):
    subfolders[:] = [
      s for s in subfolders if not s.startswith(".") and s != "__pycache__"
    ]
    relative = pathlib.Path(folder).relative_to(repo).as_posix()
    for name in names:
      files.add(name if relative == "." else "%s/%s" % (relative, name))
  return files


def _path_problem(span, repo, files):
  """Why a backticked span names a missing repository path, or None (also
  when the span is no repository path)."""
  path = span.strip()
  if path.startswith("-") and "=" in path:  # --flag=path
    path = path.split("=", 1)[1]
  path = path.strip("'\"").split("::")[0]  # tests/x.py::test_y
  if (
    not path
    or _NOT_A_PATH.search(path)
    or _SCHEME.match(path)
    or path.startswith(_OUTSIDE)
  ):
    return None
  last = path.rstrip("/").rsplit("/", 1)[-1]
  if path.split("/")[0] in _TOP_FOLDERS and "/" in path:
    if path.endswith("/"):
      found = (repo / path).is_dir()
    elif last.endswith(_FILE_SUFFIXES) or "." not in last:
      found = (repo / path).exists()
    else:  # folder/module.attribute
      module = path[: len(path) - len(last)] + last.split(".")[0] + ".py"
      found = (repo / module).is_file()
  elif last.endswith((".py", ".sh")):
    # A script at the root (`run_squad.py`) or a path inside a package
    # (`training/optimization.py`): some repository file ends with it.
    found = path in files or any(f.endswith("/" + path) for f in files)
  else:
    return None
  return None if found else "no such path: %s" % span


def _module_exists(module, repo):
  path = repo.joinpath(*module.split("."))
  return path.with_suffix(".py").is_file() or (path / "__main__.py").is_file()


def _make_targets(repo):
  makefile = (repo / "Makefile").read_text()
  targets = set()
  for names in _MAKE_TARGET.findall(makefile):
    targets.update(n for n in names.split() if not n.startswith((".", "$")))
  return targets


def _console_scripts(repo):
  with open(repo / "pyproject.toml", "rb") as f:
    return set(tomllib.load(f)["project"]["scripts"])


def _command_problems(line, repo, fenced):
  """Why a shell line names a missing program, script, module or target.
  Console scripts are checked in fenced blocks only (in prose `bert-tiny`
  is a model name)."""
  problems = []
  for segment in re.split(r"&&|\|\||;|\|", line.split(" # ")[0]):
    words = segment.split()
    while words and _ASSIGNMENT.match(words[0]):  # WORK=... bash x.sh
      words.pop(0)
    if not words:
      continue
    program, arguments = words[0], words[1:]
    first = arguments[0] if arguments else ""
    if re.search(r"(^|/)python3?$", program):
      if first == "-m" and len(arguments) > 1:
        module = arguments[1]  # a placeholder: `python -m data_prep.*`
        if (
          re.fullmatch(r"[\w.]+", module)
          and module.split(".")[0] in _PACKAGES
          and not _module_exists(module, repo)
        ):
          problems.append("no such module: python -m %s" % module)
      elif (
        first.endswith(".py")
        and not _NOT_A_PATH.search(first)
        and not (repo / first).is_file()
      ):
        problems.append("no such script: python %s" % first)
    elif program == "make":
      targets = [a for a in arguments if not a.startswith("-") and "=" not in a]
      problems += [
        "no such make target: make %s" % t
        for t in targets
        if t not in _make_targets(repo)
      ]
    elif program in ("bash", "sh"):
      if first and not first.startswith("-") and not (repo / first).is_file():
        problems.append("no such script: %s %s" % (program, first))
    elif (
      fenced
      and program.startswith("bert-")
      and program not in _console_scripts(repo)
    ):
      problems.append("no such console script: %s" % program)
  return problems


def check_page(page, repo=REPO):
  """Every broken link, path and command of a markdown page, as
  "page:line: problem" strings."""
  text = page.read_text()
  prose, blocks = _split(text)
  files = _repo_files(repo)
  problems = []

  def report(offset, problem):
    line = prose.count("\n", 0, offset) + 1
    problems.append("%s:%d: %s" % (page.name, line, problem))

  for span in _INLINE_CODE.finditer(prose):
    problem = _path_problem(span.group(1), repo, files)
    if problem:
      report(span.start(), problem)
    for problem in _command_problems(span.group(1), repo, fenced=False):
      report(span.start(), problem)
  # Links outside code spans: `[MASK]` (text) is no link.
  without_code = _INLINE_CODE.sub(lambda m: " " * len(m.group(0)), prose)
  for link in _LINK.finditer(without_code):
    target = link.group(1)
    if _SCHEME.match(target):
      continue
    path, _, anchor = target.partition("#")
    resolved = (page.parent / path) if path else page
    if not resolved.exists():
      report(link.start(), "broken link: %s" % target)
    elif (
      anchor
      and resolved.suffix == ".md"
      and anchor not in _anchors(resolved.read_text())
    ):
      report(link.start(), "no such heading: %s" % target)

  for language, lines in blocks:
    if language in _NOT_SHELL:
      continue
    continued = False
    for number, line in lines:
      if not continued and not line.lstrip().startswith("#"):
        problems += [
          "%s:%d: %s" % (page.name, number, problem)
          for problem in _command_problems(line, repo, True)
        ]
      continued = line.rstrip().endswith("\\")
  return problems


@pytest.mark.parametrize(
  "page", _pages(), ids=lambda p: p.relative_to(REPO).as_posix()
)
def test_links_paths_and_commands_exist(page):
  assert check_page(page) == []


def test_the_readme_is_a_front_page_that_links_every_page():
  text = (REPO / "README.md").read_text()
  assert len(text.splitlines()) <= 300
  first_block = _split(text)[1][0][1]
  assert [line.split()[:2] for _, line in first_block] == [
    ["make", "demo"],
    ["make", "test"],
  ]
  linked = set(_LINK.findall(text))
  pages = [p.relative_to(REPO).as_posix() for p in _pages()[1:]]
  assert [p for p in pages if p not in linked] == []


def test_the_checker_reports_what_is_missing(tmp_path):
  (tmp_path / "other.md").write_text("# Other\n\n## A heading\n")
  page = tmp_path / "page.md"
  page.write_text(
    "# Page\n\n"
    "[fine](other.md#a-heading), [fine](#page), [web](https://x.org/y)\n"
    "[planted](missing.md) and [anchor](other.md#no-such-heading)\n"
    "`examples/demo.sh`, `run_squad.py`, `out/run/x.py`, `<run>/y.py`\n"
    "`examples/no_such_demo.sh` and `run_no_such_task.py`\n"
    "`make test-fast` and `make no-such-target`\n\n"
    "```\n"
    "python -m bert_tf.plot_run --output_dir=/tmp/run \\\n"
    "  --title=x\n"
    "python -m bert_tf.no_such_command\n"
    "python no_such_script.py --flag\n"
    "bash examples/no_such.sh\n"
    "bert-run-squad --helpshort\n"
    "bert-no-such-script --flag  # comment\n"
    "```\n\n"
    "```python\nimport no_such_module\n```\n"
  )

  problems = check_page(page)

  assert problems == [
    "page.md:6: no such path: examples/no_such_demo.sh",
    "page.md:6: no such path: run_no_such_task.py",
    "page.md:7: no such make target: make no-such-target",
    "page.md:4: broken link: missing.md",
    "page.md:4: no such heading: other.md#no-such-heading",
    "page.md:12: no such module: python -m bert_tf.no_such_command",
    "page.md:13: no such script: python no_such_script.py",
    "page.md:14: no such script: bash examples/no_such.sh",
    "page.md:16: no such console script: bert-no-such-script",
  ]
