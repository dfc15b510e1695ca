# spark-hive-acid: `make demo` and `make test` work on a fresh machine with Python 3.11 + Java 17.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
WAREHOUSE ?= warehouse

export PYSPARK_PYTHON := $(abspath $(PY))
export PYSPARK_DRIVER_PYTHON := $(abspath $(PY))

.PHONY: venv demo test test-more test-all test-fast typecheck bench clean jvm-deps docs

$(STAMP): pyproject.toml setup.cfg
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,metastore,bench,convert]'
	touch $(STAMP)

venv: $(STAMP)

# needs nothing outside the repository; read_table.py (a Hive-written table) runs only when the
# corpus is there (HIVE_ACID_CORPUS, default ../shared/corpus)
demo: $(STAMP)
	$(PY) examples/quickstart.py $(WAREHOUSE)/quickstart
	$(PY) examples/sql_time_travel_cli.py $(WAREHOUSE)/sql_demo
	$(PY) examples/read_table.py --skip-without-corpus $(WAREHOUSE)

# mypy, configured in pyproject.toml ([tool.mypy]); the cache makes a second run take a second
typecheck: $(STAMP)
	$(PY) -m mypy --cache-dir .build/mypy_cache spark_hive_acid

# The second tier (`make test-more`, which CI runs after `make test`): Hive 3.1 and 4.1 (their
# readers, metastores with compactor threads, SQL engine), the real HDFS, the object-store servers
# (S3, Azure, GCS) and the Iceberg / Delta Spark readers. `make test-all` runs both.
MORE := hive31 or hive41 or hive_sql or hdfs or s3 or azure or gcs or lake_spark

# HIVE_ACID_SLOW_TESTS=1: also the tests that start a second metastore / kill a second driver.
# Corpus tests are skipped without the corpus (HIVE_ACID_CORPUS), and fail without it under CI=true.
test: $(STAMP) typecheck
	HIVE_ACID_SLOW_TESTS=1 $(PY) -m pytest -p no:cacheprovider tests -m "not ($(MORE))"

test-more: $(STAMP)
	HIVE_ACID_SLOW_TESTS=1 $(PY) -m pytest -p no:cacheprovider tests -m "$(MORE)"

test-all: test test-more

test-fast: $(STAMP)
	$(PY) -m pytest -p no:cacheprovider tests -m "not hive and not spark and not typecheck"

# Hive 3.1.3 and 4.1.0 (and Hadoop's MiniDFSCluster) from Maven Central into .build/m2 (the tests
# do this on first use too), and Hive's Derby schema scripts for their test metastores
jvm-deps: $(STAMP)
	$(PY) -c "import sys; sys.path.insert(0, 'tests'); import hive_jvm; [hive_jvm.classpath(v) for v in [*hive_jvm.VERSIONS, *hive_jvm.OTHER_POMS]]"
	$(PY) -c "import sys; sys.path.insert(0, 'tests'); from metastore_server import schema; [schema.schema_script(v) for v in schema.SCHEMAS]"

# the option tables of docs/*.md, from the registry (spark_hive_acid/options_table.py)
docs: $(STAMP)
	$(PY) tests/option_docs.py

bench: $(STAMP)
	$(PY) -m bench.run

clean:
	rm -rf $(VENV) .build $(WAREHOUSE) spark-warehouse
