# Two entry points (see README): `make demo` and `make test`. Both create .venv if missing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench example clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $(STAMP)

# The main job on bundled data: identification of data/example with its report (the true model
# overlaid), then a PNG of each report section in results/example/screenshots/ (skipped with a
# message without chromium).
demo: $(STAMP)
	$(BIN)/sparsefric identify data/example/train_*.csv \
		--validate data/example/validate_*.csv --test data/example/test_*.csv \
		--truth data/example/truth.json --out results/example --force
	$(BIN)/python -m sparsefric.screenshots results/example/report.html

lint: $(STAMP)
	$(BIN)/ruff check sparsefric tests benchmarks experiments

# The report test renders in Debian's chromium; CI installs it (a developer without root skips).
# Every test runs, the slow ones included (`pytest -m "not slow"` for a quick pass).
test: lint
	.ci/install-chromium.sh || [ "$$CI" != true ]
	$(BIN)/python -m pytest

# Accuracy against the baselines (writes benchmarks/RESULTS.md) and the core speed figures.
bench: $(STAMP)
	$(BIN)/python benchmarks/bench_core.py
	$(BIN)/python benchmarks/run.py

# Regenerate data/example byte for byte.
example: $(STAMP)
	$(BIN)/python experiments/make_example.py

clean:
	rm -rf $(VENV) results .pytest_cache
