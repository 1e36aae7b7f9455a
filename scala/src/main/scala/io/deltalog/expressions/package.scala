package io.deltalog

/**
 * Predicates: the SQL-subset parser (`PredicateParser`), the expression tree, typed values and an
 * evaluator used for partition pruning and conflict checks. A leaf: imports only `exceptions`.
 */
package object expressions
