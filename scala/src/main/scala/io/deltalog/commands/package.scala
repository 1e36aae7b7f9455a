package io.deltalog

/**
 * Operations on a table, each one transaction: today the DataFrame write (`WriteIntoDeltalog`:
 * data files, statistics, schema enforcement, constraints, generated / identity columns, replaceWhere,
 * dynamic overwrite, change data) and the statement context catalog statements add to it. Imports
 * `actions`, `protocol`, `log`, `txn`, `schema`, `expressions`, `exceptions`; never `spark` or `api`.
 */
package object commands
