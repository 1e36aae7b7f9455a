# deltalog — the README's commands. Everything installs from nothing: a venv, the Maven build
# of the engine jar, the Python package (with the jar bundled inside it).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
MVN := mvn -B -ntp
JAR_NAME := deltalog-spark_2.13-0.1.0.jar
# The jar bundled in the Python package, and what it is built from (rebuilt only when one changed).
JAR := python/deltalog/jars/$(JAR_NAME)
JAR_SOURCES := pom.xml $(shell find scala/src/main -type f)
export SPARK_LOCAL_IP := 127.0.0.1
export PYSPARK_PYTHON := $(abspath $(PY))

.PHONY: setup corpus jar jar-tested install demo test test-scala test-python test-integration-full bench peers preload-list clean interop interop

$(VENV)/.deps: python/requirements-dev.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -r python/requirements-dev.txt
	touch $@

setup: $(VENV)/.deps

# The tests need the conformance corpus (../shared/conformance, or DELTALOG_CONFORMANCE=/path):
# without it the test targets stop here, with one message saying what is missing and how to point at it.
corpus:
	@$(PYTHON) tests/conformance_corpus.py

define COPY_JAR
mkdir -p python/deltalog/jars && rm -f python/deltalog/jars/*.jar
cp target/$(JAR_NAME) python/deltalog/jars/
endef

ifneq ($(filter test test-scala jar-tested,$(MAKECMDGOALS)),)
# A run of the JVM tests builds the jar itself (jar-tested): what `install` installs is that one.
$(JAR): jar-tested ;
else
# Build the engine jar without running its tests (demo path); skipped when the jar is newer than
# pom.xml and every file of scala/src/main.
$(JAR): $(JAR_SOURCES)
	$(MVN) -q -DskipTests package
	$(COPY_JAR)
endif

jar: $(JAR)

# Build the jar and run every JVM test (Surefire); fails on any failing test. Always runs the tests;
# the jar it leaves is up to date, so a following `install` does not build it again.
jar-tested: corpus
	$(MVN) package
	$(COPY_JAR)

# A real (non-editable) install, as a user gets it from a wheel; with the jar inside it (built first
# when it is missing or older than its sources).
install: setup $(JAR)
	$(PIP) install -q --no-deps --force-reinstall ./python

demo: install
	$(PY) -m deltalog.demo

test-scala: jar-tested

test-python: corpus setup peers
	$(PY) -m pytest tests -q -p no:cacheprovider
	$(PY) -m pytest integration -q -p no:cacheprovider

test: corpus setup jar-tested install test-python

# The reliability runs at full size (8 writers x 50 appends, 50 kill -9 crashes, ...).
test-integration-full: install
	DELTALOG_INTEGRATION_FULL=1 $(PY) -m pytest integration -q -p no:cacheprovider

clean:
	rm -rf target target-* python/build python/*.egg-info python/deltalog/jars/*.jar

# The random interop matrix (issue 25) with many seeds: writes integration/INTEROP.md and the
# README's interop table. `make test` runs the same matrix with a few seeds and rewrites nothing.
SEEDS ?= 200
interop: install peers
	TZ=UTC $(PY) -m integration.interop --seeds $(SEEDS) --report --command "make interop SEEDS=$(SEEDS)"

# Side-by-side benchmarks (deltalog vs delta-rs and delta-spark); writes benchmarks/RESULTS.md,
# benchmarks/results.json, benchmarks/connector-results.json and the PNG charts in benchmarks/charts/.
# Not part of `make test`.
bench: install peers
	$(PY) benchmarks/run.py --command "make bench" --out benchmarks/RESULTS.md
	printf '\n## S5 / S6 — commits (benchmarks/txn_bench.py)\n\n' >> benchmarks/RESULTS.md
	$(PY) benchmarks/txn_bench.py --scenarios S5,S6 --engines delta-rs,deltalog >> benchmarks/RESULTS.md
	$(PY) benchmarks/connector_bench.py --scenarios S8,S8F,SCAN,APPEND --out benchmarks/RESULTS.md --json benchmarks/connector-results.json
	$(PY) benchmarks/charts.py benchmarks/results.json

# Regenerate the class list ClassPreload loads ahead of a driver's first table open (commit the
# resulting scala/src/main/resources/io/deltalog/preload-classes.txt, then rebuild the jar).
preload-list: install
	$(PY) scripts/preload_list.py

# Test-only peer jars for the benchmarks and tests/python/test_row_tracking_interop.py: delta-spark
# (Maven Central's newest build for Spark 4.2).
peers:
	$(MVN) -q dependency:get -Dartifact=io.delta:delta-spark_4.2_2.13:4.4.0 -Dtransitive=true
