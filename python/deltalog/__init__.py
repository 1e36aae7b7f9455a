"""deltalog: a Delta Lake transaction-log engine for Apache Spark.

Pure-Python parts (no JVM needed): ``deltalog.actions``, ``deltalog.protocol``,
``deltalog.features``. ``configure_spark_with_deltalog`` prepares a SparkSession builder.
"""
from __future__ import annotations

import sys as _sys

from deltalog.exceptions import DeltalogError
from deltalog.protocol import ClientCapabilities, Protocol
from deltalog.session import configure_spark_with_deltalog

__version__ = "0.1.0"

if "pyspark" in _sys.modules or "py4j" in _sys.modules:
    # Spark is in use: engine errors through any py4j call become typed errors (deltalog._jvm).
    from deltalog._jvm import install_error_translation as _install_error_translation
    _install_error_translation()

__all__ = ["ClientCapabilities", "DeltalogError", "Protocol", "configure_spark_with_deltalog",
           "__version__"]
