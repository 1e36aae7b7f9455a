"""deltalog: a Delta Lake transaction-log engine for Apache Spark.

Pure-Python parts (no JVM needed): ``deltalog.actions``, ``deltalog.protocol``,
``deltalog.features``. ``configure_spark_with_deltalog`` prepares a SparkSession builder.
"""
from __future__ import annotations

from deltalog.exceptions import DeltalogError
from deltalog.protocol import ClientCapabilities, Protocol
from deltalog.session import configure_spark_with_deltalog

__version__ = "0.1.0"

__all__ = ["ClientCapabilities", "DeltalogError", "Protocol", "configure_spark_with_deltalog",
           "__version__"]
