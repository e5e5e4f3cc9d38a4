# `make demo` runs the main job end to end on shipped data; `make test` runs the suite.
# Each target creates .venv and installs requirements.txt on first use.
PY := .venv/bin/python
STAMP := .venv/.installed

$(STAMP): requirements.txt
	python3 -m venv .venv
	$(PY) -m pip install -q -r requirements.txt 'pytest>=8.0'
	touch $(STAMP)

.PHONY: demo test test-all
demo: $(STAMP)
	bash examples/demo.sh

test: $(STAMP)
	$(PY) -m pytest -q -m "not slow" tests

test-all: $(STAMP)
	$(PY) -m pytest -q tests
