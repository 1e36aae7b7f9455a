package io.deltalog.log

import io.deltalog.actions.Action

/**
 * Receives the actions of one log file, in file order. Readers of commits and checkpoints push
 * into a sink so that replay can consume them without materialising intermediate collections.
 */
trait ReplaySink {
  /** Called once per action. `version` is the commit version, or the checkpoint version. */
  def accept(version: Long, action: Action): Unit
}
