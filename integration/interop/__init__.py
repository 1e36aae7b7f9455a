"""Random interop matrix (issue 25): seeded operation sequences written by deltalog, delta-spark,
delta-rs (and mixed), read back by deltalog, delta-spark, delta-rs, DuckDB and Polars at every
version, with generated predicates and as of timestamps between commits, and compared as
multisets with an engine-independent reference (``reference.py``). See ``integration/README.md``.
"""
