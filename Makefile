# `make run` and `make test` each work on a fresh machine by themselves.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test check coverage lint types pytest bench docs clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# (the analysis's compiled loops are built by the install: a change to them installs again;
# constraints.txt holds every dependency to the version the tests last passed with)
$(STAMP): pyproject.toml pontoon/analysis/_compiled.pyx constraints.txt | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[dev,store,analysis,server,sim,env,bench,docs]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/pontoon serve --accounts --welcome 100000

# The package's bytecode is written first (where PYTHONDONTWRITEBYTECODE is set, every
# process the tests start would compile it again), then the env's kernels are compiled into
# numba's cache beside ruff and mypy (one core each), so that the two pytest workers do not
# each compile them cold (tests/warm_kernels.py).
test: $(STAMP)
	@$(BIN)/python -m compileall -q pontoon  # the bytecode, for the many processes the tests start
	@$(BIN)/python tests/warm_kernels.py & warm=$$!; \
	$(MAKE) --no-print-directory lint types; status=$$?; \
	wait $$warm || echo "(the kernels' warm-up failed: the tests compile them)"; \
	exit $$status
	@$(MAKE) --no-print-directory pytest

lint: $(STAMP)
	$(BIN)/ruff check pontoon tests bench
	$(BIN)/ruff format --check pontoon tests bench

types: $(STAMP)
	$(BIN)/mypy pontoon

# The whole suite.
pytest: $(STAMP)
	$(BIN)/pytest -n 2 --dist worksteal

# The package's branch coverage (pytest-cov; the commands the tests start included,
# [tool.coverage.run]) by make check's tests: the total is printed, and under the floor in
# pyproject.toml ([tool.coverage.report] fail_under) the run fails. CI runs it after make test.
# Not the whole suite: on Python 3.11 tracing makes the in-process tests about 3.5 times as long
# (the rule sections' tests: 26 s of CPU, 92 s traced), which would take make test past its
# 12 minutes on two cores.
coverage: $(STAMP)
	$(BIN)/pytest -n 2 --dist worksteal -m "not integration and not slow" \
		--cov=pontoon --cov-branch --cov-report=

# The fast layer, for a change to the engine, the rules or the analysis: the suite less its
# integration tests (servers, processes, browsers, PostgreSQL) and its slow ones (markers in
# pyproject.toml). It is not `make test`: CI runs that.
check: $(STAMP)
	$(BIN)/pytest -n 2 --dist worksteal -m "not integration and not slow"

bench: $(STAMP)
	$(BIN)/python bench/engine.py

# The documentation site (mkdocs.yml) into site/, strictly: a broken link, a page the
# navigation names that is not there, or an API name that no longer resolves fails the build.
# The command-line reference is written from the `pontoon` parser itself
# (docs/hooks/cli_reference.py).
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache site
