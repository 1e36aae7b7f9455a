"""Engine errors arrive in Python as typed errors, whichever way they are raised: a ``DeltaTable``
call, ``spark.read`` / ``spark.write.format("deltalog")`` (driver side and inside Spark tasks) or a
JVM exception thrown directly. Each is an instance of its ``deltalog.exceptions`` class and of a
PySpark exception (``AnalysisException`` for most), carries ``errorClass`` and the message, and
keeps the Java exception on ``java_exception`` instead of printing its stack trace.

The first group follows delta-spark's exception tests: construct the JVM exception with one
message (every deltalog JVM exception class has a one-``String`` constructor) and throw it from
the JVM (``io.deltalog.api.ErrorsApi.raise``).
"""
from __future__ import annotations

import json
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from pyspark.errors import (AnalysisException, IllegalArgumentException, PySparkException,
                            SparkRuntimeException)

from deltalog import exceptions as dx
from deltalog import _jvm
from deltalog.tables import DeltaTable


def _raise(spark, java_error, wrapped: bool = False):
    api = spark._jvm.io.deltalog.api.ErrorsApi
    getattr(api, "raiseWrapped" if wrapped else "raise")(java_error)


def _new(spark, class_name: str, message: str):
    package, _, name = class_name.rpartition(".")
    view = spark._jvm
    for part in package.split("."):
        view = getattr(view, part)
    return getattr(view, name)(message)


# JVM class -> (Python class, errorClass of the one-message constructor, PySpark base)
ONE_MESSAGE = [
    ("io.deltalog.exceptions.TableNotFoundException", dx.TableNotFoundError, "DELTA_TABLE_NOT_FOUND",
     AnalysisException),
    ("io.deltalog.exceptions.DeltalogException", dx.DeltalogError, "DELTALOG_ERROR", AnalysisException),
    ("io.deltalog.exceptions.ActionParseException", dx.ActionParseError, "DELTA_MALFORMED_LOG_LINE",
     AnalysisException),
    ("io.deltalog.exceptions.VersionNotFoundException", dx.VersionNotFoundError, "DELTA_VERSION_NOT_FOUND",
     AnalysisException),
    ("io.deltalog.exceptions.CorruptLogFileException", dx.CorruptLogFileError, "DELTA_CORRUPT_LOG_FILE",
     AnalysisException),
    ("io.deltalog.exceptions.TableFeatureException", dx.TableFeatureError, "DELTALOG_ERROR", AnalysisException),
    ("io.deltalog.exceptions.InvalidTablePropertyException", dx.InvalidTablePropertyError, "DELTALOG_ERROR",
     AnalysisException),
    ("io.deltalog.exceptions.InvalidProtocolVersionException", dx.InvalidProtocolVersionError,
     "DELTA_INVALID_PROTOCOL_VERSION", AnalysisException),
    ("io.deltalog.exceptions.UnsupportedTableFeatureException", dx.UnsupportedTableFeatureError,
     "DELTA_UNSUPPORTED_FEATURES_FOR_READ", AnalysisException),
    ("io.deltalog.exceptions.DeltalogAssertionError", dx.DeltalogAssertionError, "DELTA_ASSERTION_FAILED",
     PySparkException),
    ("io.deltalog.exceptions.StreamingSourceException", dx.StreamingSourceError, "DELTALOG_ERROR",
     AnalysisException),
    ("io.deltalog.exceptions.ConcurrentAppendException", dx.ConcurrentAppendException, "DELTA_CONCURRENT_APPEND",
     PySparkException),
    ("io.deltalog.exceptions.MaxCommitAttemptsExceededException", dx.MaxCommitAttemptsExceededException,
     "DELTA_MAX_COMMIT_RETRIES_EXCEEDED", PySparkException),
    ("io.deltalog.exceptions.DeltaConcurrentModificationException", dx.DeltaConcurrentModificationException,
     "DELTA_CONCURRENT_MODIFICATION", PySparkException),
    ("io.deltalog.exceptions.AppendOnlyTableException", dx.AppendOnlyTableError, "DELTA_APPEND_ONLY_TABLE",
     AnalysisException),
    ("io.deltalog.exceptions.InvalidCommitException", dx.InvalidCommitError, "DELTALOG_ERROR", AnalysisException),
    ("io.deltalog.commands.SchemaMismatchException", dx.SchemaMismatchError, "DELTA_SCHEMA_MISMATCH",
     AnalysisException),
    ("io.deltalog.commands.InvalidWriteOptionException", dx.InvalidWriteOptionError, "DELTA_INVALID_WRITE_OPTION",
     AnalysisException),
    ("io.deltalog.commands.InvalidWriteException", dx.InvalidWriteError, "DELTALOG_ERROR", AnalysisException),
    ("io.deltalog.commands.ConstraintViolationException", dx.ConstraintViolationError,
     "DELTA_VIOLATE_CONSTRAINT_WITH_VALUES", SparkRuntimeException),
    ("io.deltalog.spark.read.InvalidReadOptionException", dx.InvalidReadOptionError, "DELTA_INVALID_READ_OPTION",
     AnalysisException),
    ("io.deltalog.schema.InvalidSchemaException", dx.InvalidSchemaError, "DELTA_INVALID_SCHEMA",
     AnalysisException),
    ("io.deltalog.schema.InvalidPartitionValueException", dx.InvalidPartitionValueError,
     "DELTA_INVALID_PARTITION_VALUE", AnalysisException),
    ("io.deltalog.schema.ColumnMappingException", dx.ColumnMappingError, "DELTA_INVALID_COLUMN_MAPPING",
     AnalysisException),
    ("io.deltalog.spark.read.UnsupportedTypeChangeException", dx.UnsupportedTypeChangeError,
     "DELTA_UNSUPPORTED_TYPE_CHANGE_FOR_READ", AnalysisException),
    ("io.deltalog.expressions.PredicateParseException", dx.InvalidPredicateError, "DELTA_INVALID_PREDICATE",
     AnalysisException),
    ("io.deltalog.txn.PostCommitHookFailedException", dx.PostCommitHookFailedError, "DELTA_POST_COMMIT_HOOK_FAILED",
     PySparkException),
    ("io.deltalog.dv.DeletionVectorLoadException", dx.DeletionVectorLoadError, "DELTA_DELETION_VECTOR_INVALID",
     AnalysisException),
]


def _assert_typed(err, py_class, error_class, spark_base, message=None):
    assert isinstance(err, py_class) and isinstance(err, dx.DeltalogError)
    assert isinstance(err, spark_base) and isinstance(err, PySparkException)
    assert err.errorClass == error_class and err.getCondition() == error_class
    if message is not None:
        assert err.message == message
        assert str(err) == f"[{error_class}] {message}" == err.getMessage()
    assert "\tat " not in str(err) and "JVM stacktrace" not in str(err)  # no Java trace in the text
    # The Java exception is kept, not chained: a traceback shows no Py4JJavaError.
    assert err.__cause__ is None and err.__suppress_context__
    assert err.java_exception is not None and err.py4j_error is not None


@pytest.mark.parametrize("jvm_class,py_class,error_class,spark_base", ONE_MESSAGE,
                         ids=[c[0].rpartition(".")[2] for c in ONE_MESSAGE])
def test_one_message_jvm_exceptions_raise_their_python_class(spark, jvm_class, py_class, error_class, spark_base):
    with pytest.raises(py_class) as e:
        _raise(spark, _new(spark, jvm_class, "a message from the JVM"))
    _assert_typed(e.value, py_class, error_class, spark_base, "a message from the JVM")
    assert str(e.value.java_exception.getClass().getName()) == jvm_class
    assert dx.deltalog_class(e.value) is py_class and type(e.value).__name__ == py_class.__name__


def test_typed_error_found_along_the_cause_chain(spark):
    """Spark wraps the connector's errors (task failures, FAILED_READ_FILE): the deltalog exception
    is found along the cause chain; ``java_exception`` is the outer Java exception."""
    with pytest.raises(dx.SchemaMismatchError) as e:
        _raise(spark, _new(spark, "io.deltalog.commands.SchemaMismatchException", "columns differ"), wrapped=True)
    _assert_typed(e.value, dx.SchemaMismatchError, "DELTA_SCHEMA_MISMATCH", AnalysisException, "columns differ")
    assert str(e.value.java_exception.getClass().getName()) == "org.apache.spark.SparkException"


def test_both_except_clauses_catch(spark):
    caught = []
    for handler in (dx.DeltalogError, AnalysisException, dx.TableNotFoundError):
        try:
            _raise(spark, _new(spark, "io.deltalog.exceptions.TableNotFoundException", "m"))
        except handler as err:  # noqa: PERF203
            caught.append(type(err).__name__)
    assert caught == ["TableNotFoundError"] * 3


def test_other_errors_keep_pysparks_conversion(spark):
    with pytest.raises(IllegalArgumentException) as e:
        _raise(spark, spark._jvm.java.lang.IllegalArgumentException("not ours"))
    assert not isinstance(e.value, dx.DeltalogError) and "not ours" in str(e.value)
    with pytest.raises(AnalysisException) as e:
        spark.sql("SELECT * FROM no_such_table_for_typed_errors").collect()
    assert not isinstance(e.value, dx.DeltalogError)
    assert e.value.getCondition() == "TABLE_OR_VIEW_NOT_FOUND"
    # A plain Java AssertionError from Spark code is not taken for one of deltalog's.
    from py4j.protocol import Py4JJavaError
    with pytest.raises(Py4JJavaError):
        _raise(spark, spark._jvm.java.lang.AssertionError("spark's own"))


def test_installing_twice_is_harmless(spark):
    import py4j.java_gateway
    import py4j.protocol
    before = (py4j.protocol.get_return_value, py4j.java_gateway.get_return_value)
    assert _jvm.install_error_translation() and _jvm.install_error_translation()
    assert (py4j.protocol.get_return_value, py4j.java_gateway.get_return_value) == before
    with pytest.raises(dx.TableNotFoundError) as e:
        _raise(spark, _new(spark, "io.deltalog.exceptions.TableNotFoundException", "once"))
    assert e.value.message == "once"


def test_translated_error_pickles(spark):
    with pytest.raises(dx.VersionNotFoundError) as e:
        _raise(spark, _new(spark, "io.deltalog.exceptions.VersionNotFoundException", "v9"))
    err = e.value
    state = {k: v for k, v in err.__dict__.items() if k not in ("java_exception", "py4j_error")}
    err.__dict__.clear()
    err.__dict__.update(state)
    copy = pickle.loads(pickle.dumps(err))
    assert isinstance(copy, dx.VersionNotFoundError) and isinstance(copy, AnalysisException)
    assert copy.errorClass == "DELTA_VERSION_NOT_FOUND" and str(copy) == str(err)


# ----------------------------------------------------------------------------- real paths

def test_read_of_a_missing_table(spark, tmp_path):
    path = tmp_path / "no" / "such"
    with pytest.raises(AnalysisException) as e:
        spark.read.format("deltalog").load(str(path)).collect()
    _assert_typed(e.value, dx.TableNotFoundError, "DELTA_TABLE_NOT_FOUND", AnalysisException)
    assert str(path) in e.value.message and "\n" not in str(e.value)


def test_deltatable_and_dataframe_share_the_translation(spark, tmp_path):
    with pytest.raises(dx.TableNotFoundError) as e:
        DeltaTable.forPath(spark, str(tmp_path))
    _assert_typed(e.value, dx.TableNotFoundError, "DELTA_TABLE_NOT_FOUND", AnalysisException)


def test_invalid_read_options(spark, tmp_path):
    spark.range(2).write.format("deltalog").save(str(tmp_path / "t"))
    with pytest.raises(dx.InvalidReadOptionError) as e:
        spark.read.format("deltalog").option("versionAsOf", "0").option("timestampAsOf", "2020-01-01") \
            .load(str(tmp_path / "t")).collect()
    _assert_typed(e.value, dx.InvalidReadOptionError, "DELTA_INVALID_READ_OPTION", AnalysisException)


def test_version_not_found_on_read(spark, tmp_path):
    spark.range(2).write.format("deltalog").save(str(tmp_path / "t"))
    with pytest.raises(dx.VersionNotFoundError) as e:
        spark.read.format("deltalog").option("versionAsOf", "7").load(str(tmp_path / "t")).collect()
    _assert_typed(e.value, dx.VersionNotFoundError, "DELTA_VERSION_NOT_FOUND", AnalysisException)


def test_schema_mismatch_on_append(spark, tmp_path):
    table = str(tmp_path / "t")
    spark.createDataFrame([(1, "a")], "id long, s string").write.format("deltalog").save(table)
    with pytest.raises(dx.SchemaMismatchError) as e:
        spark.createDataFrame([(1, 2)], "id long, s int").write.format("deltalog").mode("append").save(table)
    _assert_typed(e.value, dx.SchemaMismatchError, "DELTA_SCHEMA_MISMATCH", AnalysisException)
    assert "s (table: string, data: int)" in e.value.message


def test_invalid_write_option(spark, tmp_path):
    with pytest.raises(AnalysisException) as e:
        spark.range(3).write.format("deltalog").option("maxRecordsPerFile", "ten").save(str(tmp_path / "t"))
    _assert_typed(e.value, dx.InvalidWriteOptionError, "DELTA_INVALID_WRITE_OPTION", AnalysisException)
    assert "maxRecordsPerFile" in e.value.message and not (tmp_path / "t" / "_delta_log").exists()


def test_write_refusals_are_typed(spark, tmp_path):
    table = str(tmp_path / "t")
    spark.range(3).write.format("deltalog").save(table)
    with pytest.raises(dx.DeltalogError) as e:  # a refusal raised as the base DeltalogException
        spark.range(3).write.format("deltalog").mode("error").save(table)
    _assert_typed(e.value, dx.DeltalogError, "DELTA_PATH_EXISTS", AnalysisException)
    append_only = str(tmp_path / "append_only")
    spark.range(3).write.format("deltalog").option("delta.appendOnly", "true").save(append_only)
    with pytest.raises(dx.AppendOnlyTableError) as e:
        spark.range(3).write.format("deltalog").mode("overwrite").save(append_only)
    _assert_typed(e.value, dx.AppendOnlyTableError, "DELTA_APPEND_ONLY_TABLE", AnalysisException)


def test_constraint_violation_inside_spark_tasks(spark, tmp_path):
    """CHECK constraints are evaluated by the tasks that write the rows: Spark aborts the job and
    wraps the task's exception; it still arrives as the typed error."""
    table = tmp_path / "t"
    log = table / "_delta_log"
    log.mkdir(parents=True)
    schema = {"type": "struct", "fields": [{"name": "id", "type": "long", "nullable": True, "metadata": {}}]}
    actions = [
        {"commitInfo": {"timestamp": 0, "operation": "CREATE TABLE"}},
        {"protocol": {"minReaderVersion": 1, "minWriterVersion": 3}},
        {"metaData": {"id": "00000000-0000-0000-0000-0000000000c1", "format": {"provider": "parquet", "options": {}},
                      "schemaString": json.dumps(schema), "partitionColumns": [],
                      "configuration": {"delta.constraints.small_id": "id < 100"}, "createdTime": 0}},
    ]
    (log / ("0" * 20 + ".json")).write_text("\n".join(json.dumps(a) for a in actions) + "\n")
    with pytest.raises(SparkRuntimeException) as e:
        spark.createDataFrame([(1,), (200,)], "id long").write.format("deltalog").mode("append").save(str(table))
    _assert_typed(e.value, dx.ConstraintViolationError, "DELTA_VIOLATE_CONSTRAINT_WITH_VALUES",
                  SparkRuntimeException)
    assert "CHECK constraint small_id" in e.value.message and "id = 200" in e.value.message
    assert sorted(p.name for p in log.iterdir() if p.suffix == ".json") == ["0" * 20 + ".json"]


def test_exceptions_module_needs_no_pyspark():
    code = ("import sys, deltalog, deltalog.exceptions, deltalog.protocol; "
            "assert 'pyspark' not in sys.modules and 'py4j' not in sys.modules, sorted(sys.modules); "
            "e = deltalog.exceptions.TableNotFoundError('DELTA_TABLE_NOT_FOUND', 'm'); "
            "assert str(e) == '[DELTA_TABLE_NOT_FOUND] m' and type(e).__mro__[1] is deltalog.exceptions.DeltalogError")
    subprocess.run([sys.executable, "-c", code], check=True)
