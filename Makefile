# deltalog — the README's commands. Everything installs from nothing: a venv, the Maven build
# of the engine jar, the Python package (with the jar bundled inside it).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
MVN := mvn -B -ntp
JAR_NAME := deltalog-spark_2.13-0.1.0.jar
export SPARK_LOCAL_IP := 127.0.0.1
export PYSPARK_PYTHON := $(abspath $(PY))

.PHONY: setup jar jar-tested install demo test test-scala test-python test-integration-full bench peers preload-list clean

$(VENV)/.deps: python/requirements-dev.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -r python/requirements-dev.txt
	touch $@

setup: $(VENV)/.deps

# Build the engine jar without running its tests (demo path).
jar:
	$(MVN) -q -DskipTests package
	mkdir -p python/deltalog/jars && rm -f python/deltalog/jars/*.jar
	cp target/$(JAR_NAME) python/deltalog/jars/

# Build the jar and run every JVM test (Surefire); fails on any failing test.
jar-tested:
	$(MVN) package
	mkdir -p python/deltalog/jars && rm -f python/deltalog/jars/*.jar
	cp target/$(JAR_NAME) python/deltalog/jars/

# A real (non-editable) install, as a user gets it from a wheel.
install: setup
	$(PIP) install -q --no-deps --force-reinstall ./python

demo: setup jar install
	$(PY) -m deltalog.demo

test-scala: jar-tested

test-python: setup peers
	$(PY) -m pytest tests -q -p no:cacheprovider
	$(PY) -m pytest integration -q -p no:cacheprovider

test: setup jar-tested install test-python

# The reliability runs at full size (8 writers x 50 appends, 50 kill -9 crashes, ...).
test-integration-full: setup jar install
	DELTALOG_INTEGRATION_FULL=1 $(PY) -m pytest integration -q -p no:cacheprovider

clean:
	rm -rf target target-* python/build python/*.egg-info python/deltalog/jars/*.jar

# Side-by-side benchmarks (deltalog vs delta-rs); writes benchmarks/RESULTS.md. Not part of `make test`.
bench: setup jar install peers
	$(PY) benchmarks/run.py --command "make bench" --out benchmarks/RESULTS.md
	printf '\n## S5 / S6 — commits (benchmarks/txn_bench.py)\n\n' >> benchmarks/RESULTS.md
	$(PY) benchmarks/txn_bench.py --scenarios S5,S6 --engines delta-rs,deltalog >> benchmarks/RESULTS.md
	$(PY) benchmarks/connector_bench.py --scenarios S8,SCAN,APPEND --out benchmarks/RESULTS.md

# Regenerate the class list ClassPreload loads ahead of a driver's first table open (commit the
# resulting scala/src/main/resources/io/deltalog/preload-classes.txt, then rebuild the jar).
preload-list: setup jar install
	$(PY) scripts/preload_list.py

# Test-only peer jars for the benchmarks and tests/python/test_row_tracking_interop.py: delta-spark
# (Maven Central's newest build for Spark 4.2).
peers:
	$(MVN) -q dependency:get -Dartifact=io.delta:delta-spark_4.2_2.13:4.4.0 -Dtransitive=true
