package io.deltalog.tools

import java.math.BigInteger
import java.nio.charset.StandardCharsets.UTF_8
import java.security.MessageDigest

import org.apache.hadoop.conf.Configuration

import io.deltalog.log.{DeltaLog, LogReplay}

/**
 * A fresh (uncached) snapshot load of a table with its file set, summarised for checks of very
 * large logs from another process (benchmarks/distributed_replay_bench.py): version, live-file
 * and tombstone counts, total size, the protocol, a SHA-256 of the metadata's fields, an order-independent digest of the live paths (the sum of
 * their SHA-256 values mod 2^256, hex), whether the load was a Spark job, the load's wall time and
 * the driver heap in use after it.
 * The digest needs no sorted copy of millions of paths in the heap being measured.
 */
object SnapshotDigest {
  private val Mod = BigInteger.ONE.shiftLeft(256)

  /** JSON summary of loading `path`; `threshold` sets `spark.deltalog.replay.distributedThreshold` when non-null. */
  def load(path: String, conf: Configuration, threshold: String): String = {
    val c = new Configuration(conf)
    if (threshold != null) c.set(LogReplay.DistributedThresholdKey, threshold)
    System.gc()
    val jobsBefore = io.deltalog.spark.read.SparkDistributedReplay.replays
    val t0 = System.nanoTime()
    val snapshot = DeltaLog.uncached(path, c).update()
    val state = snapshot.state
    val seconds = (System.nanoTime() - t0) / 1e9
    val distributed = io.deltalog.spark.read.SparkDistributedReplay.replays > jobsBefore
    val rt = Runtime.getRuntime
    System.gc()
    val heapMb = (rt.totalMemory() - rt.freeMemory()) / (1024 * 1024)
    val sha = MessageDigest.getInstance("SHA-256")
    var sum = BigInteger.ZERO
    state.foreachChunk { (chunk, deleted) =>
      var i = 0
      while (i < chunk.length) {
        if (deleted == null || !deleted.get(i)) sum = sum.add(new BigInteger(1, sha.digest(chunk.path(i).getBytes(UTF_8))))
        i += 1
      }
    }
    val digest = String.format("%064x", sum.mod(Mod))
    val p = state.protocol
    val protocol = s"${p.minReaderVersion}/${p.minWriterVersion}/${p.readerFeatures.map(_.toSeq.sorted.mkString("+")).getOrElse("")}" +
      s"/${p.writerFeatures.map(_.toSeq.sorted.mkString("+")).getOrElse("")}"
    val m = state.metadata
    val metadataText = Seq(m.id, m.name.getOrElse(""), m.description.getOrElse(""), m.format.provider, m.schemaString,
      m.partitionColumns.mkString(","), m.configuration.toSeq.sorted.map { case (k, v) => s"$k=$v" }.mkString(","),
      m.createdTime.getOrElse(-1L).toString).mkString("\u0000")
    val metadataSha = MessageDigest.getInstance("SHA-256").digest(metadataText.getBytes(UTF_8)).map("%02x".format(_)).mkString
    val txns = state.setTransactions.toSeq.sortBy(_._1).map { case (k, t) => s""""$k":${t.version}""" }.mkString(",")
    s"""{"version":${state.version},"distributed":$distributed,"count":${state.numFiles},"tombstones":${state.allTombstones.size},""" +
      s""""sizeInBytes":${state.sizeInBytes},"paths_sum_sha256":"$digest","txns":{$txns},""" +
      s""""configuration_entries":${state.metadata.configuration.size},"protocol":"$protocol","metadata_sha256":"$metadataSha",""" +
      s""""seconds":$seconds,"heap_mb_after":$heapMb,""" +
      s""""max_heap_mb":${rt.maxMemory() / (1024 * 1024)}}"""
  }
}
