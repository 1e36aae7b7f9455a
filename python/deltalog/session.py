"""Configure a SparkSession to use deltalog.

``configure_spark_with_deltalog(builder)`` adds the bundled jar to ``spark.jars``, the session
extension to ``spark.sql.extensions`` and sets the deltalog catalog, *appending* to whatever the
user already configured (delta-spark's helper overwrites ``spark.jars.packages``).
"""
from __future__ import annotations

import glob
import os
import warnings
from typing import Any, Optional

from deltalog import _class_data
from deltalog._jvm import install_error_translation

EXTENSION_CLASS = "io.deltalog.spark.DeltalogSparkSessionExtension"
CATALOG_CLASS = "io.deltalog.spark.DeltalogCatalog"
CATALOG_KEY = "spark.sql.catalog.spark_catalog"
JAVA_OPTIONS_KEY = "spark.driver.extraJavaOptions"


def bundled_jar_path() -> str:
    """Path of the engine jar shipped inside this package."""
    jars = sorted(glob.glob(os.path.join(os.path.dirname(__file__), "jars", "deltalog-spark_*.jar")))
    if not jars:
        raise FileNotFoundError(
            "The deltalog engine jar is missing from the package (deltalog/jars/). Install a built "
            "wheel, or run `make jar install` in a source checkout.")
    return jars[-1]


def _append_csv(current: Optional[str], value: str) -> str:
    items = [x.strip() for x in (current or "").split(",") if x.strip()]
    if value not in items:
        items.append(value)
    return ",".join(items)


def configure_spark_with_deltalog(builder: Any, jar_path: Optional[str] = None,
                                  class_sharing: Optional[bool] = None) -> Any:
    """Return ``builder`` configured for deltalog, keeping every value the user already set.

    * ``spark.jars``: the bundled jar is appended to the existing comma-separated list.
    * ``spark.sql.extensions``: the deltalog extension is appended to existing extensions.
    * ``spark.sql.catalog.spark_catalog``: set to the deltalog catalog unless the user chose a
      different catalog, which is kept (with a warning: deltalog's catalog features are then off).
    * ``spark.driver.extraJavaOptions``: when this process is about to launch the driver JVM
      (Java 13+), class-data sharing flags are appended (``deltalog._class_data``): the first
      driver writes an archive of the classes it loaded when it exits, later drivers start from
      it. ``class_sharing=False`` or ``DELTALOG_CLASS_SHARING=0`` leaves the driver's options alone.
      The cache keeps at most 2 archives (``DELTALOG_CLASS_DATA_MAX_ARCHIVES``), the most recently
      used; ``deltalog cache clear`` deletes them.

    It also installs deltalog's error translation into py4j (``deltalog._jvm``): errors of the
    engine raised by any Spark call arrive as typed ``deltalog.exceptions`` errors that are also
    PySpark exceptions (README, "Errors").
    """
    install_error_translation()
    options = getattr(builder, "_options", {})
    jar = jar_path or bundled_jar_path()
    flags = _class_data.driver_java_options(options, class_sharing, extra_jars=[jar])
    if flags:
        current = options.get(JAVA_OPTIONS_KEY, "").strip()
        builder = builder.config(JAVA_OPTIONS_KEY, " ".join(([current] if current else []) + flags))
    builder = builder.config("spark.jars", _append_csv(options.get("spark.jars"), jar))
    builder = builder.config("spark.sql.extensions",
                             _append_csv(options.get("spark.sql.extensions"), EXTENSION_CLASS))
    existing_catalog = options.get(CATALOG_KEY)
    if existing_catalog and existing_catalog != CATALOG_CLASS:
        warnings.warn(f"{CATALOG_KEY} is already set to {existing_catalog}; keeping it. deltalog "
                      f"tables will not be resolved through the session catalog.", stacklevel=2)
    else:
        builder = builder.config(CATALOG_KEY, CATALOG_CLASS)
    return builder
