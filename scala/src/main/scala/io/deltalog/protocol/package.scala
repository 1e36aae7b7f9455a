package io.deltalog

/**
 * The `protocol` action and its rules: the `TableFeature` registry, `Protocol.forNewTable`, required
 * minimum, automatic enablement with dependency closure, normalise / merge, upgrade, drop and the
 * read / write checks for a client's capabilities. Mirrored by Python's `deltalog.protocol` and held
 * identical by the shared vectors. Imports `actions` and `exceptions` only; no file system.
 */
package object protocol
