package io.deltalog.log

import java.nio.file.{Files, Path => NioPath}

import scala.jdk.CollectionConverters._

import org.apache.parquet.column.ParquetProperties.WriterVersion
import org.apache.parquet.example.data.Group
import org.apache.parquet.example.data.simple.SimpleGroupFactory
import org.apache.parquet.hadoop.example.ExampleParquetWriter
import org.apache.parquet.hadoop.metadata.CompressionCodecName
import org.apache.parquet.schema.MessageTypeParser
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import io.deltalog.actions._
import io.deltalog.log.CheckpointTestSupport._
import io.deltalog.protocol.Protocol

/**
 * [[ProtocolAndMetadataColumns]]: the protocol / metaData rows decoded from their column chunks
 * equal parquet-mr's record assembly of the same rows (every checkpoint of the corpus, and files
 * written here in every layout the reader handles), and the files it does not handle still read.
 */
class ProtocolAndMetadataColumnsSuite {

  private val corpus: NioPath = io.deltalog.ConformanceCorpus.root

  /** (protocol, metadata) read with the decoder on or off, or the error's class and message. */
  private def readPm(cp: CheckpointInstance, decode: Boolean): Either[String, (Option[Protocol], Option[Metadata])] = {
    withProtocolAndMetadataDecoder(decode) {
      try Right(CheckpointReader.readProtocolAndMetadata(conf, cp))
      catch { case e: Exception => Left(s"${e.getClass.getName}: ${e.getMessage}") }
    }
  }

  private def single(p: NioPath, version: Long): CheckpointInstance = CheckpointInstance(version, Seq(status(hadoopPath(p))))

  @Test def everyCorpusCheckpointDecodesAsAssembled(): Unit = {
    val Classic = """(\d+)\.checkpoint(\.\d+\.\d+)?\.parquet""".r
    val Uuid = """(\d+)\.checkpoint\.[^.]+\.parquet""".r
    val files = Files.walk(corpus).iterator().asScala.filter(Files.isRegularFile(_))
      .filter(_.getParent.getFileName.toString == "_delta_log").toSeq.sortBy(_.toString)
      .flatMap(p => p.getFileName.toString match {
        case Classic(v, _) => Some(p -> v.toLong)
        case Uuid(v) => Some(p -> v.toLong)
        case _ => None
      })
    assertTrue(files.size > 50, s"${files.size} checkpoint files")
    val decodedBefore = ProtocolAndMetadataColumns.filesDecoded.get
    var withBoth = 0
    files.foreach { case (p, v) =>
      val cp = single(p, v)
      val assembled = readPm(cp, decode = false)
      assertEquals(assembled, readPm(cp, decode = true), p.toString)
      if (assembled.exists(r => r._1.isDefined && r._2.isDefined)) withBoth += 1
    }
    val decoded = ProtocolAndMetadataColumns.filesDecoded.get - decodedBefore
    println(s"[protocol/metaData columns] ${files.size} corpus checkpoint files, $withBoth with both actions, $decoded decoded from their columns")
    // most corpus checkpoints are snappy-compressed Spark files, which the decoder reads
    assertTrue(decoded * 2 > files.size, s"$decoded of ${files.size} decoded")
  }

  private val Schema = MessageTypeParser.parseMessageType(
    """message spark_schema {
      |  optional group protocol {
      |    optional int32 minReaderVersion;
      |    optional int32 minWriterVersion;
      |    optional group readerFeatures (LIST) { repeated group list { optional binary element (STRING); } }
      |    optional group writerFeatures (LIST) { repeated binary array (STRING); }
      |  }
      |  optional group metaData {
      |    optional binary id (STRING);
      |    optional binary name (STRING);
      |    optional binary description (STRING);
      |    optional group format { optional binary provider (STRING);
      |      optional group options (MAP) { repeated group key_value { required binary key (STRING); optional binary value (STRING); } } }
      |    optional binary schemaString (STRING);
      |    optional group partitionColumns (LIST) { repeated group list { optional binary element (STRING); } }
      |    optional group configuration (MAP) { repeated group map { required binary key (STRING); optional binary value (STRING); } }
      |    optional int64 createdTime;
      |  }
      |  optional group add { optional binary path (STRING); optional int64 size; }
      |}""".stripMargin)

  /**
   * A checkpoint of `rows` add rows with the protocol and metaData rows at `pmAt` (each a row
   * index; -1 leaves that action out), written by parquet-mr with the given codec, page version
   * and dictionary setting; small pages so the columns span several.
   */
  private def write(dir: NioPath, name: String, rows: Int, protocolAt: Int, metadataAt: Int,
      codec: CompressionCodecName, v2: Boolean, dictionary: Boolean,
      protocol: Group => Unit, metadata: Group => Unit): NioPath = {
    val file = dir.resolve(name)
    val w = ExampleParquetWriter.builder(hadoopPath(file)).withConf(conf).withType(Schema)
      .withCompressionCodec(codec).withDictionaryEncoding(dictionary)
      .withWriterVersion(if (v2) WriterVersion.PARQUET_2_0 else WriterVersion.PARQUET_1_0)
      .withPageSize(4096).withPageRowCountLimit(700).build()
    val f = new SimpleGroupFactory(Schema)
    try (0 until rows).foreach { i =>
      val g = f.newGroup()
      if (i == protocolAt) protocol(g.addGroup("protocol"))
      else if (i == metadataAt) metadata(g.addGroup("metaData"))
      else g.addGroup("add").append("path", s"part-$i.parquet").append("size", i.toLong)
      w.write(g)
    } finally w.close()
    file
  }

  private def features(g: Group, readers: Seq[String], writers: Seq[String]): Unit = {
    g.append("minReaderVersion", 3).append("minWriterVersion", 7)
    val rf = g.addGroup("readerFeatures")
    readers.foreach(r => rf.addGroup("list").append("element", r))
    val wf = g.addGroup("writerFeatures")
    writers.foreach(w => wf.append("array", w))
  }

  private def richMetadata(g: Group): Unit = {
    g.append("id", "7f1c2d5e-table").append("name", "events").append("description", "all the events")
    val fmt = g.addGroup("format")
    fmt.append("provider", "parquet")
    val opts = fmt.addGroup("options")
    opts.addGroup("key_value").append("key", "compression").append("value", "zstd")
    g.append("schemaString", """{"type":"struct","fields":[{"name":"d","type":"date","nullable":true,"metadata":{}}]}""")
    val pc = g.addGroup("partitionColumns")
    pc.addGroup("list").append("element", "d")
    pc.addGroup("list").append("element", "région")
    val conf = g.addGroup("configuration")
    (1 to 6).foreach(i => conf.addGroup("map").append("key", s"delta.k$i").append("value", s"v$i"))
    conf.addGroup("map").append("key", "delta.nullValue") // a null value is kept
    conf.addGroup("map").append("key", "delta.k1").append("value", "again") // a later key wins
    g.append("createdTime", 1700000000123L)
  }

  @Test def everyLayoutDecodesAsAssembled(): Unit = {
    val dir = tempLogDir("pm-columns")
    var n = 0
    for {
      codec <- Seq(CompressionCodecName.UNCOMPRESSED, CompressionCodecName.SNAPPY)
      v2 <- Seq(false, true)
      dictionary <- Seq(false, true)
      (protocolAt, metadataAt) <- Seq((0, 1), (2998, 2999), (1200, 1201), (1500, 40), (-1, 10), (5, -1))
    } {
      n += 1
      val file = write(dir, f"$n%020d.checkpoint.parquet", 3000, protocolAt, metadataAt, codec, v2, dictionary,
        features(_, Seq("deletionVectors", "columnMapping"), Seq("deletionVectors", "columnMapping", "appendOnly")),
        richMetadata)
      val cp = single(file, n)
      val before = ProtocolAndMetadataColumns.filesDecoded.get
      val decoded = readPm(cp, decode = true)
      // V2 data pages (parquet-mr stores their values in DELTA encodings) are left to parquet-mr
      val handled = !v2
      assertEquals(before + (if (handled) 1 else 0), ProtocolAndMetadataColumns.filesDecoded.get,
        s"$codec v2=$v2 dict=$dictionary: decoded")
      val what = s"$codec v2=$v2 dict=$dictionary p@$protocolAt m@$metadataAt"
      assertEquals(readPm(cp, decode = false), decoded, what)
      val (p, m) = decoded.toOption.get
      assertEquals(protocolAt >= 0, p.isDefined, what)
      assertEquals(metadataAt >= 0, m.isDefined, what)
      p.foreach { p =>
        assertEquals((3, 7), (p.minReaderVersion, p.minWriterVersion))
        assertEquals(Some(Set("deletionVectors", "columnMapping")), p.readerFeatures)
        assertEquals(Some(Set("deletionVectors", "columnMapping", "appendOnly")), p.writerFeatures)
      }
      m.foreach { m =>
        assertEquals("7f1c2d5e-table", m.id)
        assertEquals((Some("events"), Some("all the events")), (m.name, m.description))
        assertEquals(Format("parquet", Map("compression" -> "zstd")), m.format)
        assertEquals(Seq("d", "région"), m.partitionColumns)
        assertEquals(Seq("delta.k1" -> "again") ++ (2 to 6).map(i => s"delta.k$i" -> s"v$i") :+ ("delta.nullValue" -> null),
          m.configuration.toSeq)
        assertEquals(Some(1700000000123L), m.createdTime)
      }
    }
  }

  /** Nulls, empty lists and maps, a missing format: the converters' lenient rules. */
  @Test def sparseRowsFollowTheConvertersRules(): Unit = {
    val dir = tempLogDir("pm-columns-sparse")
    val file = write(dir, "00000000000000000003.checkpoint.parquet", 50, 20, 30, CompressionCodecName.SNAPPY,
      v2 = false, dictionary = true,
      g => { g.append("minReaderVersion", 1).append("minWriterVersion", 2); g.addGroup("readerFeatures") },
      g => { g.append("id", "x").append("schemaString", "{}"); g.addGroup("partitionColumns"); g.addGroup("configuration") })
    val cp = single(file, 3)
    val decoded = readPm(cp, decode = true)
    assertEquals(readPm(cp, decode = false), decoded)
    val (Some(p), Some(m)) = decoded.toOption.get
    // an empty feature list on a legacy protocol is treated as absent (delta-rs #2360)
    assertEquals(Protocol(1, 2), p)
    assertEquals(Metadata(id = "x", schemaString = "{}"), m)
  }

  /** Rows the converters reject are left to parquet-mr, which names the file. */
  @Test def aProtocolWithoutVersionsFailsAsBefore(): Unit = {
    val dir = tempLogDir("pm-columns-bad")
    val file = write(dir, "00000000000000000004.checkpoint.parquet", 50, 10, 11, CompressionCodecName.UNCOMPRESSED,
      v2 = false, dictionary = false, g => g.append("minWriterVersion", 2), richMetadata)
    val cp = single(file, 4)
    val before = ProtocolAndMetadataColumns.filesDecoded.get
    val decoded = readPm(cp, decode = true)
    assertEquals(before, ProtocolAndMetadataColumns.filesDecoded.get, "not decoded here")
    assertEquals(readPm(cp, decode = false), decoded)
    assertTrue(decoded.left.toOption.exists(e => e.contains("CorruptLogFileException") && e.contains(file.getFileName.toString)), decoded.toString)
  }
}
