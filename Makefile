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

# The main job on bundled data: identification of data/example with its report.
demo: $(STAMP)
	$(BIN)/sparsefric identify data/example/train_*.csv \
		--validate data/example/validate_*.csv --test data/example/test_*.csv \
		--out results/example

# The report test renders in Debian's chromium; CI installs it (a developer without root skips).
test: $(STAMP)
	.ci/install-chromium.sh || [ "$$CI" != true ]
	$(BIN)/ruff check sparsefric tests benchmarks experiments
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python benchmarks/run_all.py

# Regenerate data/example byte for byte.
example: $(STAMP)
	$(BIN)/python experiments/make_example.py

clean:
	rm -rf $(VENV) results .pytest_cache
