# payrecon — `make demo` and `make test` set everything up on a fresh machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PYTEST_ARGS ?=

.PHONY: demo test bench lint venv clean system-deps

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

# Debian packages the browser test and the load benchmark need (chromium, wrk).
system-deps:
	@if ! command -v chromium >/dev/null 2>&1 || ! command -v wrk >/dev/null 2>&1; then \
		if [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium wrk >/dev/null; \
		else \
			echo "note: install chromium and wrk (Debian packages) for the browser test and benchmarks"; \
		fi; \
	fi

demo: $(STAMP)
	$(BIN)/payrecon demo

test: $(STAMP) system-deps
	$(BIN)/pytest $(PYTEST_ARGS)

bench: $(STAMP) system-deps
	$(BIN)/python bench/bench_receiver.py
	$(BIN)/python bench/bench_reconcile.py
	$(BIN)/python bench/bench_reports.py --results bench/results/reports-latest.md
	$(BIN)/python bench/bench_startup.py --results bench/results/startup.md

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

clean:
	rm -rf $(VENV) payrecon-demo .pytest_cache .mypy_cache .ruff_cache
