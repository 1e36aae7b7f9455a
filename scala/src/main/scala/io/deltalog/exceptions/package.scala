package io.deltalog

/**
 * The typed errors users can cause, each with a stable `errorClass` shared with Python's
 * `deltalog.exceptions` (and a one-String constructor for tests). Imports nothing of deltalog's.
 */
package object exceptions
