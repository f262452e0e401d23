# The two commands of the README: `make serve` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Test processes: each runs its own servers and engine. Four on two cores: with two, a
# core sat idle whenever a test waited (a server starting, a timeout running out, a
# browser page). One after the other: pytest 229 s with two against 195 s with four
# (324 and 359 s of CPU: four start more servers); other runs of the day 220 s with two,
# 175-200 s with four, 187 s with three. With 4,020 tests on a slower machine, back to
# back: 611 s with four against 649 s with six. On 2026-11-28, a quiet machine, one
# after the other: 597 s for the suite of 2795ac5 (4,009 tests), 611 s for that of
# 24d2bdc (4,024): the suite did not grow slower, machines differ. Tests that hold the
# server to a time leave room for this load (the fairness test measures a heavy run
# alone first). Server starts forked from a process that imported the app once
# (tests/forkserver.py), back to back on 2026-11-28: pytest 391 s and 757 CPU-s against
# 427 s and 830 CPU-s with a new interpreter for each (LIMELIGHT_TEST_EXEC=1).
TEST_WORKERS ?= 4
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

.PHONY: serve test pytest lint typecheck bench screenshots install clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

install: $(STAMP)

# The data directory is the per-user one the CLI uses too (README, Start).
serve: $(STAMP)
	$(BIN)/limelight serve

lint: $(STAMP)
	$(BIN)/ruff check src tests bench scripts
	$(BIN)/ruff format --check src tests bench scripts
	$(BIN)/lint-imports

typecheck: $(STAMP)
	$(BIN)/mypy

# Bytecode is written and read (__pycache__, ignored by git) even where the environment
# sets PYTHONDONTWRITEBYTECODE: the suite starts many server and CLI processes, and
# each compiled the project again (about 0.2 s of a 1.3 s start). Side by side, two runs
# each: pytest 272 and 284 s against 290 and 293 s.
#
# The checks run beside pytest rather than before it: they take 10 s of one core on a
# fresh clone (mypy has no cache there), pytest keeps both cores busy for three minutes.
# -Oline keeps each line of their output whole; any failure fails `make test`.
test: $(STAMP)
	$(MAKE) --no-print-directory -j3 -Oline lint typecheck pytest

pytest: $(STAMP)
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/pytest -q -n $(TEST_WORKERS) --dist loadscope

bench: $(STAMP)
	$(BIN)/python bench/run.py

# The README's console screenshots (docs/screenshots), taken by the browser tests.
screenshots: $(STAMP)
	LIMELIGHT_README_SCREENSHOTS=docs/screenshots $(BIN)/pytest -q -p no:cacheprovider tests/browser

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
	find src tests bench scripts -name __pycache__ -prune -exec rm -rf {} +
