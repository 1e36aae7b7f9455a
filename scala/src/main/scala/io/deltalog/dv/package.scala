package io.deltalog

/**
 * Deletion vectors: loading a descriptor's bitmap (inline, UUID-relative or absolute file) into a
 * `RoaringBitmapArray`. A leaf: imports `actions` (the descriptor) and `exceptions`.
 */
package object dv
