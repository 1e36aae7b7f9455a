package io.deltalog.log

import java.nio.file.{Files, Path => NioPath}

import scala.collection.mutable.ArrayBuffer

import com.fasterxml.jackson.databind.JsonNode
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, Path}

import io.deltalog.TestDirs
import io.deltalog.actions._
import io.deltalog.protocol.Protocol

/** Shared helpers of the checkpoint suites. */
object CheckpointTestSupport {
  val conf = new Configuration()

  def tempLogDir(prefix: String): NioPath = {
    val table = TestDirs.create(prefix)
    val log = table.resolve("_delta_log")
    Files.createDirectories(log)
    log
  }

  /** `f` with [[CheckpointReader.DecodeProtocolAndMetadata]] set to `decode` (restored after). */
  def withProtocolAndMetadataDecoder[T](decode: Boolean)(f: => T): T = {
    val before = CheckpointReader.DecodeProtocolAndMetadata
    CheckpointReader.DecodeProtocolAndMetadata = decode
    try f finally CheckpointReader.DecodeProtocolAndMetadata = before
  }

  def hadoopPath(p: NioPath): Path = new Path(p.toUri)

  def status(p: Path): FileStatus = p.getFileSystem(conf).getFileStatus(p)

  /** Collects every action read. */
  class Collect extends ReplaySink {
    val actions = ArrayBuffer.empty[Action]
    val versions = ArrayBuffer.empty[Long]
    override def accept(version: Long, action: Action): Unit = { actions += action; versions += version }
  }

  /**
   * Keeps the `add` rows whose path is not `shadowed` in a [[FileChunkBuilder]], like replay's
   * checkpoint sink; `parallel`: lets the reader decode `stats` on a second thread.
   */
  class ChunkSink(shadowed: String => Boolean = _ => false, parallel: Boolean, keepsEvery: Boolean = false) extends ReplaySink {
    val files = new FileChunkBuilder(1024)
    /** How many row groups had their stats column detached. */
    var detached = 0
    override def accept(version: Long, action: Action): Unit = action match {
      case a: AddFile => if (!shadowed(a.path)) files += a
      case _ =>
    }
    override def wantsPlainAdds: Boolean = true
    override def acceptPlainAdd(version: Long, r: PlainAddRow): Unit =
      if (!shadowed(r.path)) {
        files.addPlain(r.pathBuf, r.pathOff, r.pathLen, r.partitionValues, r.size, r.modificationTime,
          r.statsBuf, r.statsOff, r.statsLen)
      }
    override val detachedStats: DetachedStats = if (!parallel) null else new DetachedStats {
      override def keptRows: Int = files.size
      override def keepsEveryAdd: Boolean = keepsEvery
      override def detach(): Utf8ColumnBuilder = { detached += 1; files.detachStats() }
      override def attach(stats: Utf8ColumnBuilder): Unit = files.attachStats(stats)
    }
    /** The kept rows, in order. */
    def rows: IndexedSeq[AddFile] = { val c = files.result(); (0 until c.length).map(c.get) }
  }

  def readAll(files: Seq[Path], version: Long, options: CheckpointReadOptions = CheckpointReadOptions()): Seq[Action] = {
    val c = new Collect
    CheckpointReader.read(conf, CheckpointInstance(version, files.map(status)), c, options)
    c.actions.toSeq
  }

  def tree(a: Action): JsonNode = ActionCodec.reader.readTree(a.json)

  val SchemaString: String =
    """{"type":"struct","fields":[""" +
      """{"name":"id","type":"long","nullable":true,"metadata":{}},""" +
      """{"name":"name","type":"string","nullable":true,"metadata":{}},""" +
      """{"name":"ts","type":"timestamp","nullable":true,"metadata":{}},""" +
      """{"name":"d","type":"date","nullable":true,"metadata":{}},""" +
      """{"name":"amount","type":"decimal(10,2)","nullable":true,"metadata":{}},""" +
      """{"name":"flag","type":"boolean","nullable":true,"metadata":{}},""" +
      """{"name":"nested","type":{"type":"struct","fields":[{"name":"x","type":"integer","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}},""" +
      """{"name":"part","type":"string","nullable":true,"metadata":{}},""" +
      """{"name":"day","type":"date","nullable":true,"metadata":{}}]}"""

  def stats(i: Int): String =
    s"""{"numRecords":${100 + i % 7},"minValues":{"id":$i,"name":"name_$i","ts":"2023-01-01T00:00:0${i % 10}.123Z",""" +
      s""""d":"2023-01-${10 + i % 20}","amount":${i % 1000}.25,"nested":{"x":1}},"maxValues":{"id":${i + 99},""" +
      s""""name":"zname_$i","ts":"2023-02-01T00:00:00.000Z","d":"2023-02-01","amount":12345.50,"nested":{"x":9}},""" +
      s""""nullCount":{"id":0,"name":${i % 3},"ts":0,"d":0,"amount":0,"flag":1,"nested":{"x":0}},"tightBounds":${i % 2 == 0}}"""

  def protocolLegacy: Protocol = Protocol(1, 2)
  def protocolFeatures: Protocol = Protocol(3, 7, Some(Set("deletionVectors", "v2Checkpoint")),
    Some(Set("deletionVectors", "v2Checkpoint", "domainMetadata", "appendOnly", "invariants")))

  /** Reconciled checkpoint content: P, M, txns, domains, `numAdds` adds, tombstones. */
  def reconciled(protocol: Protocol, numAdds: Int): Seq[Action] = {
    val out = ArrayBuffer.empty[Action]
    out += protocol
    out += Metadata(id = "7d9c3b2a-0000-4000-8000-000000000001", name = Some("t"), description = Some("checkpoint test"),
      format = Format("parquet", Map("k" -> "v")), schemaString = SchemaString, partitionColumns = Seq("part", "day"),
      configuration = Map("delta.checkpointInterval" -> "10", "delta.enableDeletionVectors" -> "true"),
      createdTime = Some(1700000000000L))
    out += SetTransaction("app-1", 42, Some(1700000000001L))
    out += SetTransaction("app-2", 7, None)
    out += DomainMetadata("delta.rowTracking", """{"rowIdHighWaterMark":9}""", removed = false)
    out += DomainMetadata("user.domain", "", removed = false)
    for (i <- 0 until numAdds) {
      val part = if (i % 11 == 0) null else s"p${i % 5}"
      val dir = if (part == null) "part=__HIVE_DEFAULT_PARTITION__" else s"part=$part"
      val name = if (i % 13 == 0) s"f%C3%BC%20r-$i-ü.parquet" else s"part-$i-0b8a2f5e.c000.snappy.parquet"
      out += AddFile(
        path = s"$dir/day=2024-01-0${1 + i % 9}/$name",
        partitionValues = if (i % 17 == 0) Map("part" -> part, "day" -> null) else Map("part" -> part, "day" -> s"2024-01-0${1 + i % 9}"),
        size = 1000L + i,
        modificationTime = 1700000000000L + i,
        dataChange = false,
        stats = if (i % 19 == 0) None else Some(stats(i)),
        tags = if (i % 3 == 0) Some(Map("INSERTION_TIME" -> s"${1700000000000000L + i}", "ZCUBE_ID" -> "z")) else None,
        deletionVector =
          if (i % 5 == 0) Some(DeletionVectorDescriptor("u", "ab^-aqEH.-t@S}K{vb[*k^", Some(1), 36, i % 50 + 1L))
          else if (i % 7 == 0) Some(DeletionVectorDescriptor("i", "wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L", None, 40, 3L, Some(99L)))
          else None,
        baseRowId = if (i % 4 == 0) Some(i * 100L) else None,
        defaultRowCommitVersion = if (i % 4 == 0) Some(3L) else None,
        clusteringProvider = if (i % 9 == 0) Some("liquid") else None)
    }
    for (i <- 0 until numAdds / 10) {
      out += (if (i % 2 == 0) RemoveFile(s"part=p1/day=2024-01-01/removed-$i.parquet", Some(1700000000000L + i),
        dataChange = false, extendedFileMetadata = Some(true), partitionValues = Some(Map("part" -> "p1", "day" -> null)),
        size = Some(77L + i), stats = Some("""{"numRecords":1}"""), tags = Some(Map("a" -> "b")),
        deletionVector = if (i % 4 == 0) Some(DeletionVectorDescriptor("u", "ab^-aqEH.-t@S}K{vb[*k^", Some(1), 36, 2L)) else None,
        baseRowId = Some(5L), defaultRowCommitVersion = Some(1L))
      else RemoveFile(s"old%20file-$i.parquet", if (i % 3 == 0) None else Some(1700000000000L - i), dataChange = false))
    }
    out.toSeq
  }

  /** What a checkpoint keeps of an action: removes lose stats and tags. */
  def expectedAfterCheckpoint(a: Action): Action = a match {
    case r: RemoveFile => r.copy(stats = None, tags = None)
    case other => other
  }
}
