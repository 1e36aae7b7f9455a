package io.deltalog.txn

import io.deltalog.actions.Action
import io.deltalog.exceptions.DeltalogException
import io.deltalog.log.Snapshot

/**
 * Work run after a successful commit ([[OptimisticTransaction.registerPostCommitHook]]). A failing
 * hook does not undo the commit: the error is logged and passed to [[handleError]].
 */
trait PostCommitHook {
  def name: String

  /**
   * @param txn              the committed transaction
   * @param committedVersion its version
   * @param snapshot         the table at `committedVersion`
   * @param committedActions the actions written
   */
  def run(txn: OptimisticTransaction, committedVersion: Long, snapshot: Snapshot, committedActions: Seq[Action]): Unit

  /** Called with a non-fatal error of [[run]]; the default ignores it (it is logged already). */
  def handleError(error: Throwable, version: Long): Unit = ()
}

/** A post-commit hook failed after the commit succeeded. */
class PostCommitHookFailedException private (val hook: String, val version: Long, cause: Throwable,
    verbatim: String)
  extends DeltalogException("DELTA_POST_COMMIT_HOOK_FAILED", DeltalogException.messageOr(verbatim,
    s"Commit version $version succeeded but the post-commit hook '$hook' failed: ${cause.getMessage}. The " +
      "table is consistent; re-run the hook's work (e.g. regenerate the manifest)."), cause) {
  def this(hook: String, version: Long, cause: Throwable) = this(hook, version, cause, null)
  def this(message: String) = this(null, -1L, null, message)
}
