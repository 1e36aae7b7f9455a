"""py4j plumbing: reach the engine's entry points (``io.deltalog.api``) from a SparkSession."""
from __future__ import annotations

import json
from typing import Any


def jvm(spark: Any) -> Any:
    """The py4j JVM view of a classic (non-Connect) SparkSession."""
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


def translate_jvm_error(e: BaseException) -> BaseException:
    """A py4j error from the engine as the matching typed Python error (``e`` itself otherwise).

    Any engine exception deriving from ``io.deltalog.exceptions.DeltalogException`` is mapped by its
    ``errorClass`` (``deltalog.exceptions.ERROR_CLASSES``); an error class without a Python class
    of its own falls back on the JVM class hierarchy (so every conflict is a
    ``DeltaConcurrentModificationException``); the seed's plain ``AssertionError`` s become
    ``DeltalogAssertionError`` (errorClass ``DELTA_ASSERTION_FAILED``). Conflicts carry ``table`` /
    ``winningVersion`` (and ``partition`` / ``file`` when known).
    """
    from deltalog.exceptions import (ERROR_CLASSES, JVM_CLASS_FALLBACKS, DeltaConcurrentModificationException,
                                     DeltalogAssertionError, DeltalogError, UnsupportedTableFeatureError)
    java_exc = getattr(e, "java_exception", None)
    if java_exc is None:
        return e
    names = _jvm_class_names(java_exc)
    try:
        if ("io.deltalog.exceptions.DeltalogException" in names
                or "io.deltalog.exceptions.DeltalogAssertionError" in names):
            error_class = str(java_exc.errorClass())
            cls = ERROR_CLASSES.get(error_class, DeltalogError)
        elif "java.lang.AssertionError" in names:
            error_class, cls = "DELTA_ASSERTION_FAILED", DeltalogAssertionError
        else:
            return e
        message = str(java_exc.getMessage())
    except Exception:  # not an object we can read
        return e
    prefix = f"[{error_class}] "
    if message.startswith(prefix):
        message = message[len(prefix):]
    if cls is UnsupportedTableFeatureError:
        return UnsupportedTableFeatureError(str(java_exc.table()), str(java_exc.access()),
                                            list(java_exc.unsupportedFeaturesJava()), message)
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
    return err


def call(fn: Any, *args: Any) -> Any:
    """Call a py4j method; engine errors are re-raised as typed ``deltalog.exceptions`` errors."""
    try:
        return fn(*args)
    except Exception as e:  # py4j.protocol.Py4JJavaError
        translated = translate_jvm_error(e)
        if translated is e:
            raise
        raise translated from None
