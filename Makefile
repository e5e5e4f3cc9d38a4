# `make demo` runs the main job end to end on shipped data; `make lint` checks
# the formatting (`ruff format --check`) and then `ruff check`; `make test`
# runs the lint gate, then the suite (CI); `make test-fast` the unit loop (no
# test marked `process`: no programs started, no training or export end to
# end); `make test-all` adds the slow tests.
# Each target creates .venv on first use and installs into it
# requirements.txt, requirements-beam.txt (the Beam extra: the tests run the
# Beam jobs), the test tools and the project itself, editable (`pip install
# -e .`: `import bert_tf` and the bert-* commands work from any directory).
# $(STAMP) marks the install done; editing a requirements file, pyproject.toml
# or this Makefile redoes it.
PY := .venv/bin/python
STAMP := .venv/.installed
# pytest-xdist processes: the suite takes ~12 min with 2 on CI's 2 cores
# instead of ~20 in one (most of its time is process start-up and tracing).
PYTEST_WORKERS ?= 2

$(STAMP): requirements.txt requirements-beam.txt pyproject.toml Makefile
	python3 -m venv .venv
	$(PY) -m pip install -q -r requirements.txt -r requirements-beam.txt \
	  'pytest>=8.0' 'pytest-xdist>=3.5' 'ruff==0.17.6'
	$(PY) -m pip install -q -e .
	touch $(STAMP)

# The browser tests (marker `browser`) drive Debian's chromium through its
# chromedriver: installed by apt once (as root, else through sudo), nothing
# done when both are there; without apt-get those tests skip with the reason.
browser:
	@if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; \
	then if command -v apt-get >/dev/null; then \
	  SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO \
	    apt-get install -y -qq --no-install-recommends chromium chromium-driver; \
	else echo "no apt-get: the browser tests will be skipped"; fi; fi

.PHONY: demo lint test test-fast test-all browser
demo: $(STAMP)
	bash examples/demo.sh

lint: $(STAMP)
	$(PY) -m ruff format --check .
	$(PY) -m ruff check .

test: lint browser
	$(PY) -m pytest -q -n $(PYTEST_WORKERS) --durations=15 -m "not slow" tests

test-fast: $(STAMP)
	$(PY) -m pytest -q -m "not slow and not process" tests

test-all: $(STAMP) browser
	$(PY) -m pytest -q -n $(PYTEST_WORKERS) tests
