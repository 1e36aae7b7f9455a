package io.deltalog.log

import io.deltalog.actions._

/**
 * The checkpoint content of a snapshot, in checkpoint order: protocol, metadata, live `txn`s,
 * live domain metadata ([[head]]), the live files, then the unexpired tombstones (with
 * `dataChange = false`). It is an ordinary iterator of actions (the live files rebuilt as
 * `AddFile`s), and, while nothing has been read from it, [[CheckpointWriter]] writes it
 * column-wise straight from the snapshot's [[SnapshotState]] instead.
 */
final class CheckpointActions private[log] (snapshot: Snapshot) extends Iterator[Action] {
  /** Protocol, metadata, `txn`s and domain metadata. */
  lazy val head: IndexedSeq[Action] =
    (Seq(snapshot.protocol, snapshot.metadata) ++ snapshot.setTransactions ++ snapshot.domainMetadata).toIndexedSeq

  def metadata: Metadata = snapshot.metadata

  /** The live files. */
  def state: SnapshotState = snapshot.state

  /** Unexpired tombstones, `dataChange = false`. */
  lazy val tombstones: IndexedSeq[RemoveFile] =
    snapshot.tombstones.map(r => if (r.dataChange) r.copy(dataChange = false) else r).toIndexedSeq

  private var started = false
  private lazy val all: Iterator[Action] = head.iterator ++ snapshot.allFiles ++ tombstones.iterator

  /** True while no action was taken from the iterator. */
  private[log] def untouched: Boolean = !started

  override def hasNext: Boolean = { started = true; all.hasNext }
  override def next(): Action = { started = true; all.next() }
}
