# spark-hive-acid: `make demo` and `make test` work on a fresh machine with Python 3.11 + Java 17.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
WAREHOUSE ?= warehouse

export PYSPARK_PYTHON := $(abspath $(PY))
export PYSPARK_DRIVER_PYTHON := $(abspath $(PY))

.PHONY: venv demo test test-fast bench clean

$(STAMP): pyproject.toml setup.cfg
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,metastore,bench]'
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(PY) examples/quickstart.py $(WAREHOUSE)/quickstart
	$(PY) examples/read_table.py $(WAREHOUSE)

# HIVE_ACID_SLOW_TESTS=1: also the tests that start a second metastore / kill a second driver
test: $(STAMP)
	HIVE_ACID_SLOW_TESTS=1 $(PY) -m pytest -p no:cacheprovider tests

test-fast: $(STAMP)
	$(PY) -m pytest -p no:cacheprovider tests -m "not hive and not spark"

bench: $(STAMP)
	$(PY) -m bench.run

clean:
	rm -rf $(VENV) .build $(WAREHOUSE) spark-warehouse
