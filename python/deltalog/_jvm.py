"""py4j plumbing: reach the engine's entry points (``io.deltalog.api``) from a SparkSession."""
from __future__ import annotations

import json
from typing import Any


def jvm(spark: Any) -> Any:
    """The py4j JVM view of a classic (non-Connect) SparkSession (and deltalog's error translation
    installed: ``install_error_translation``)."""
    if not _installed:
        install_error_translation()
    view = getattr(spark, "_jvm", None)
    if view is None:
        sc = getattr(spark, "sparkContext", None)
        view = getattr(sc, "_jvm", None)
    if view is None:
        raise RuntimeError("deltalog needs a classic SparkSession (Spark Connect has no py4j gateway).")
    return view


class JvmRef:
    """A py4j object handle whose method lookups are not cached on the object.

    py4j caches each method it hands out on the ``JavaObject``, and the method points back at the
    object: a reference cycle, so the JVM side (a table's whole live-file state) is released only
    when Python's cyclic garbage collector happens to run, not when the last reference goes. Looking
    methods up through ``get_method`` keeps the handle free of cycles: the JVM object is released
    as soon as the Python one is dropped.
    """

    __slots__ = ("_obj",)

    def __init__(self, obj: Any) -> None:
        self._obj = obj

    def __getattr__(self, name: str) -> Any:
        from py4j.java_gateway import get_method
        return get_method(self._obj, name)


_API_CLASSES: dict = {}


def api_class(spark: Any, name: str) -> Any:
    """The py4j class ``io.deltalog.api.<name>``, looked up once per JVM gateway.

    Walking ``jvm.io.deltalog.api.X`` costs one py4j round trip per name part (~0.5-2 ms in all);
    tables are opened often enough for that to show.
    """
    view = jvm(spark)
    key = (id(view), name)
    hit = _API_CLASSES.get(key)
    if hit is not None and hit[0] is view:
        return hit[1]
    cls = getattr(view.io.deltalog.api, name)
    _API_CLASSES[key] = (view, cls)
    return cls


def protocol_api(spark: Any) -> Any:
    return api_class(spark, "ProtocolApi")


def evaluate_protocol_cases(spark: Any, cases: list) -> list:
    """Run protocol cases (the tests/vectors format) on the JVM in one py4j call."""
    return json.loads(protocol_api(spark).evaluate(json.dumps(cases)))


def _jvm_class_names(java_exc: Any) -> list:
    """The JVM exception's class and superclass names (most specific first)."""
    names = []
    try:
        cls = java_exc.getClass()
        while cls is not None and len(names) < 16:
            names.append(str(cls.getName()))
            cls = cls.getSuperclass()
    except Exception:
        pass
    return names


_DELTALOG_BASES = ("io.deltalog.exceptions.DeltalogException", "io.deltalog.exceptions.DeltalogAssertionError")


def _deltalog_throwable(java_exc: Any, plain_assertions: bool) -> Any:
    """``(throwable, class names)`` of the first deltalog exception along ``java_exc``'s cause chain
    (Spark wraps driver-side errors of the connector, and task failures in a ``SparkException``);
    with ``plain_assertions`` a top-level ``java.lang.AssertionError`` counts too. ``None`` when
    there is none."""
    seen = 0
    current = java_exc
    while current is not None and seen < 16:
        names = _jvm_class_names(current)
        if any(base in names for base in _DELTALOG_BASES):
            return current, names
        if seen == 0 and plain_assertions and "java.lang.AssertionError" in names:
            return current, names
        try:
            cause = current.getCause()
        except Exception:
            return None
        if cause is None or (hasattr(cause, "equals") and cause.equals(current)):
            return None
        current, seen = cause, seen + 1
    return None


def translate_jvm_error(e: BaseException, plain_assertions: bool = True) -> BaseException:
    """A py4j error from the engine as the matching typed Python error (``e`` itself otherwise).

    Any engine exception deriving from ``io.deltalog.exceptions.DeltalogException`` (or the
    engine's ``DeltalogAssertionError``), at the top of the Java exception or anywhere along its
    cause chain, is mapped by its ``errorClass`` (``deltalog.exceptions.ERROR_CLASSES``); an error
    class without a Python class of its own falls back on the JVM class hierarchy
    (``JVM_CLASS_FALLBACKS``: every conflict is a ``DeltaConcurrentModificationException``);
    with ``plain_assertions`` (the ``DeltaTable`` / transaction calls) the seed's plain
    ``AssertionError`` s become ``DeltalogAssertionError`` (``DELTA_ASSERTION_FAILED``).
    Conflicts carry ``table`` / ``winningVersion`` (and ``partition`` / ``file`` when known).

    When pyspark is importable the error is also an instance of a PySpark exception (its class's
    ``_spark_base``, ``AnalysisException`` for most: ``_spark_error``). ``java_exception`` holds the
    Java exception of ``e`` (the whole cause chain), ``py4j_error`` the ``Py4JJavaError`` itself
    (its ``str`` is the JVM stack trace, which the typed error does not print).
    """
    from deltalog.exceptions import (ERROR_CLASSES, JVM_CLASS_FALLBACKS, DeltaConcurrentModificationException,
                                     DeltalogAssertionError, DeltalogError, UnsupportedTableFeatureError)
    if isinstance(e, DeltalogError):  # translated already (the py4j hook)
        return e
    # Py4JJavaError.java_exception; PySpark's CapturedException keeps the Java exception as _origin.
    top = getattr(e, "java_exception", None) or getattr(e, "_origin", None)
    if top is None or not hasattr(top, "getClass"):
        return e
    found = _deltalog_throwable(top, plain_assertions)
    if found is None:
        return e
    java_exc, names = found
    try:
        if any(base in names for base in _DELTALOG_BASES):
            error_class = str(java_exc.errorClass())
            cls = ERROR_CLASSES.get(error_class, DeltalogError)
        else:
            error_class, cls = "DELTA_ASSERTION_FAILED", DeltalogAssertionError
        message = java_exc.getMessage()
        message = "" if message is None else str(message)
    except Exception:  # not an object we can read
        return e
    prefix = f"[{error_class}] "
    if message.startswith(prefix):
        message = message[len(prefix):]
    if cls is UnsupportedTableFeatureError:
        try:
            table = java_exc.table()
            err: DeltalogError = UnsupportedTableFeatureError(
                None if table is None else str(table), str(java_exc.access()),
                [str(f) for f in java_exc.unsupportedFeaturesJava()], message)
        except Exception:
            return e
    else:
        if cls is DeltalogError:
            cls = next((py for jvm_name, py in JVM_CLASS_FALLBACKS if jvm_name in names), DeltalogError)
        err = cls.__new__(cls)
        DeltalogError.__init__(err, error_class, message)
    if isinstance(err, DeltaConcurrentModificationException):
        for attr in ("table", "winningVersion", "partition", "file"):
            try:
                value = getattr(java_exc, attr)()
            except Exception:
                continue
            if hasattr(value, "isDefined"):  # scala.Option
                value = value.get() if value.isDefined() else None
            setattr(err, attr, value if value is None or isinstance(value, (int, str)) else str(value))
    err = _spark_error(err)
    err.java_exception = top
    err.py4j_error = e
    return err


# ------------------------------------------------------------------------ PySpark exception types

_SPARK_CLASSES: dict = {}


def _spark_class(cls: type) -> type:
    """``cls`` combined with its PySpark base (``cls._spark_base``), made once per class; ``cls``
    itself when pyspark cannot be imported."""
    hit = _SPARK_CLASSES.get(cls)
    if hit is not None:
        return hit
    try:
        import pyspark.errors as spark_errors
    except Exception:
        return cls
    base = getattr(spark_errors, getattr(cls, "_spark_base", "AnalysisException"), spark_errors.PySparkException)
    # PySparkException's accessors, answered from the deltalog error (no pyspark error-class lookup).
    namespace = {
        "__module__": cls.__module__,
        "__qualname__": cls.__qualname__,
        "__doc__": cls.__doc__,
        "_deltalog_class": cls,
        "__str__": lambda self: Exception.__str__(self),
        "__reduce__": lambda self: (_rebuild_spark_error, (cls, self.args, self.__dict__)),
        "getCondition": lambda self: self.errorClass,
        "getErrorClass": lambda self: self.errorClass,
        "getMessage": lambda self: Exception.__str__(self),
        "getMessageParameters": lambda self: {},
        "getSqlState": lambda self: None,
        "getQueryContext": lambda self: [],
        "getBreakingChangeInfo": lambda self: None,
    }
    made = type(cls.__name__, (cls, base), namespace)
    _SPARK_CLASSES[cls] = made
    return made


def _rebuild_spark_error(cls: type, args: tuple, state: dict) -> BaseException:
    made = _spark_class(cls)
    err = made.__new__(made, *args)
    err.__dict__.update(state)
    return err


def _spark_error(err: BaseException) -> BaseException:
    """``err`` as an instance of its class combined with the fitting PySpark exception."""
    made = _spark_class(type(err))
    if made is type(err):
        return err
    copy = made.__new__(made, *err.args)
    copy.__dict__.update(err.__dict__)
    # PySparkException's own fields, for code that reads them directly.
    copy._message = getattr(err, "message", str(err))
    copy._errorClass = getattr(err, "errorClass", None)
    copy._messageParameters = {}
    copy._contexts = []
    return copy


# ------------------------------------------------------------------------ the py4j hook

_HOOK_MARK = "_deltalog_translates_errors"
_installed = False


def _hooked(fn: Any) -> bool:
    """``fn`` is deltalog's wrapper, or a wrapper (pyspark's ``capture_sql_exception``) around it."""
    if getattr(fn, _HOOK_MARK, False):
        return True
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            if getattr(cell.cell_contents, _HOOK_MARK, False):
                return True
        except ValueError:  # empty cell
            continue
    return False


def _translating(get_return_value: Any) -> Any:
    def get_return_value_translated(*args: Any, **kwargs: Any) -> Any:
        try:
            return get_return_value(*args, **kwargs)
        except Exception as e:  # Py4JJavaError, or PySpark's conversion of one (it wraps this hook)
            translated = translate_jvm_error(e, plain_assertions=False)
            if translated is e:
                raise
            raise translated from None

    setattr(get_return_value_translated, _HOOK_MARK, True)
    get_return_value_translated.__wrapped__ = get_return_value  # type: ignore[attr-defined]
    return get_return_value_translated


def install_error_translation() -> bool:
    """Translate deltalog's JVM errors for every py4j call (DataFrame operations, ``spark.sql``,
    ``DeltaTable``): the typed ``deltalog.exceptions`` error is raised ``from None`` instead of a
    ``Py4JJavaError``. Other errors are left to PySpark's own conversion, unchanged.

    py4j's ``get_return_value`` is wrapped where PySpark wraps it: ``py4j.protocol`` (which
    ``pyspark``'s ``install_exception_handler`` wraps again on each new session, so deltalog's
    translation runs first) and ``py4j.java_gateway`` (the function py4j calls, when a session
    exists already). Idempotent; ``False`` when py4j is not installed.
    """
    try:
        import py4j.java_gateway
        import py4j.protocol
    except Exception:
        return False
    if not _hooked(py4j.protocol.get_return_value):
        py4j.protocol.get_return_value = _translating(py4j.protocol.get_return_value)
    if not _hooked(py4j.java_gateway.get_return_value):
        py4j.java_gateway.get_return_value = _translating(py4j.java_gateway.get_return_value)
    global _installed
    _installed = True
    return True


def call(fn: Any, *args: Any) -> Any:
    """Call a py4j method; engine errors are re-raised as typed ``deltalog.exceptions`` errors
    (the same translation as the py4j hook, plus the seed's plain ``AssertionError`` s)."""
    try:
        return fn(*args)
    except Exception as e:  # py4j.protocol.Py4JJavaError
        translated = translate_jvm_error(e)
        if translated is e:
            raise
        raise translated from None
