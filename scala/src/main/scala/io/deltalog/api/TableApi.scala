package io.deltalog.api

import com.fasterxml.jackson.databind.node.JsonNodeFactory
import io.deltalog.actions.Action
import io.deltalog.log.{DeltaLog, Snapshot}
import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.deltalog.SessionHadoopConf

/**
 * py4j entry points for tables: simple types in (paths, longs), JSON strings and Arrow IPC
 * bytes out. Python's `deltalog.tables.DeltaTable` is the only intended caller.
 */
object TableApi {
  // The first table open of a driver loads ~1,600 classes; a second thread loads them ahead.
  ClassPreload.start()
  // Replay of very large logs as a Spark job when a session is active (see SparkDistributedReplay).
  io.deltalog.spark.read.SparkDistributedReplay.register()

  // One Configuration for all tables, so DeltaLog's cache (keyed by path and conf) is reused and
  // re-opening a table only reads the commits written since (incremental update).
  @volatile private var conf: Configuration = _

  /** The shared Configuration (also used by [[TxnApi]], so both see the same cached DeltaLog). */
  private[api] def hadoopConf(): Configuration = synchronized {
    if (conf == null) {
      conf = SparkSession.getActiveSession.map(SessionHadoopConf.of).getOrElse(new Configuration())
    }
    conf
  }

  /** The cached `DeltaLog` of `path` under the shared Configuration. */
  private[api] def deltaLog(path: String): DeltaLog = DeltaLog.forTable(path, hadoopConf())

  def forPath(path: String): SnapshotHandle = {
    val log = DeltaLog.forTable(path, hadoopConf())
    new SnapshotHandle(log, log.update())
  }

  def forPathAtVersion(path: String, version: Long): SnapshotHandle = {
    val log = DeltaLog.forTable(path, hadoopConf())
    new SnapshotHandle(log, log.snapshotAt(version))
  }

  def forPathAtTimestamp(path: String, timestampMs: Long): SnapshotHandle = {
    val log = DeltaLog.forTable(path, hadoopConf())
    new SnapshotHandle(log, log.snapshotAtTimestamp(timestampMs))
  }

  /**
   * `forPath` with Hadoop options for this table (delta-spark's `forPath(spark, path, hadoopConf)`):
   * the shared Configuration plus `options`; `version` < 0 and `timestampMs` = Long.MinValue for the latest.
   */
  def forPathWithConf(path: String, options: java.util.Map[String, String], version: Long,
      timestampMs: Long): SnapshotHandle = {
    val c = new Configuration(hadoopConf())
    options.forEach((k, v) => c.set(k, v))
    val log = DeltaLog.forTable(path, c)
    val snapshot =
      if (version >= 0) log.snapshotAt(version)
      else if (timestampMs != Long.MinValue) log.snapshotAtTimestamp(timestampMs)
      else log.update()
    new SnapshotHandle(log, snapshot)
  }

  /**
   * `ALTER TABLE ... DROP FEATURE` on the table at `path` (`DeltaTable.dropFeatureSupport`);
   * `table` names it in messages (null: the path). Returns the downgrade commit's version.
   */
  def dropFeatureSupport(path: String, featureName: String, truncateHistory: Boolean, table: String): Long =
    io.deltalog.commands.DropTableFeature.run(deltaLog(path), featureName, truncateHistory,
      Option(table).getOrElse(path))

  /**
   * Test hook for the conflict handling of DROP FEATURE: [[dropFeatureSupport]], but after the
   * downgrade transaction has read and validated the table and before it commits, `actionsNdjson`
   * is committed by another transaction as operation `operationName` (e.g. a file with a deletion
   * vector, or a property that enables the feature again).
   */
  def dropFeatureSupportWithConcurrentCommit(path: String, featureName: String, truncateHistory: Boolean,
      actionsNdjson: String, operationName: String): Long = {
    val drop = new io.deltalog.commands.DropTableFeature(deltaLog(path), featureName, truncateHistory, path)
    drop.beforeDowngradeCommit = _ => {
      val h = TxnApi.start(path)
      h.commit(actionsNdjson, operationName, "{}", null)
    }
    drop.run()
  }

  def clearCache(): Unit = synchronized {
    DeltaLog.clearCache()
    conf = null
  }
}

/** One snapshot as seen from Python. */
class SnapshotHandle(val deltaLog: DeltaLog, val snapshot: Snapshot) {
  def version: Long = snapshot.version
  def timestamp: Long = snapshot.timestamp
  def protocolJson: String = Action.mapper.writeValueAsString(snapshot.protocol.toJsonNode)
  def metadataJson: String = Action.mapper.writeValueAsString(snapshot.metadata.toJsonNode)
  def numFiles: Long = snapshot.numFiles

  /** `DESCRIBE HISTORY` of the table (its latest version, as delta-spark's `history()`); `limit` < 0: every commit. */
  def history(spark: SparkSession, limit: Int): org.apache.spark.sql.DataFrame = {
    val entries = io.deltalog.log.TableHistory(deltaLog, if (limit < 0) None else Some(limit))
    spark.createDataFrame(java.util.Arrays.asList(io.deltalog.spark.DescribeHistoryCommand.rows(entries): _*),
      io.deltalog.spark.DescribeHistoryCommand.schema)
  }

  /** `DESCRIBE DETAIL` of this snapshot; `name` the catalog name or null. */
  def detail(spark: SparkSession, name: String): org.apache.spark.sql.DataFrame =
    spark.createDataFrame(java.util.Arrays.asList(io.deltalog.spark.DescribeDetailCommand.row(snapshot, Option(name))),
      io.deltalog.spark.DescribeDetailCommand.schema)
  def sizeInBytes: Long = snapshot.sizeInBytes
  /**
   * The live files / tombstones as an Arrow IPC stream written into `file`: Python memory-maps it,
   * so large states never cross py4j as one (base64-encoded) byte array.
   */
  def filesArrowToFile(file: String): Unit = FilesArrow.addsFromStateToFile(snapshot.state, file)
  /**
   * The live files as raw Arrow buffers in `file` ([[FilesTransfer]]): false, with nothing
   * written, when the state has fields that format leaves out (then use [[filesArrowToFile]]).
   */
  def filesRawToFile(file: String): Boolean = FilesTransfer.write(snapshot.state, file)
  def tombstonesArrowToFile(file: String): Unit = FilesArrow.removesToFile(snapshot.tombstones, file)
  def setTransactionsJson: String = jsonArray(snapshot.setTransactions)
  def domainMetadataJson: String = jsonArray(snapshot.domainMetadata)
  /** Writes a checkpoint of this snapshot and updates `_last_checkpoint`. */
  def checkpoint(): Unit = deltaLog.checkpoint(snapshot)

  private def jsonArray(actions: Iterable[_ <: Action]): String = {
    val arr = JsonNodeFactory.instance.arrayNode()
    actions.foreach(a => arr.add(a.toJsonNode))
    Action.mapper.writeValueAsString(arr)
  }
}
