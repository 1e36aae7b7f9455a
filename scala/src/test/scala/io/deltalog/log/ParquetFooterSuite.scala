package io.deltalog.log

import java.nio.{ByteBuffer, ByteOrder}
import java.nio.file.{Files, Paths, Path => NioPath}

import scala.jdk.CollectionConverters._

import org.apache.parquet.format.converter.ParquetMetadataConverter
import org.apache.parquet.hadoop.ParquetFileReader
import org.apache.parquet.hadoop.metadata.ParquetMetadata
import org.apache.parquet.io.LocalInputFile
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

/**
 * [[ParquetFooter]] against parquet-mr's own footer decoding: every Parquet file of the
 * conformance corpus (checkpoints, sidecars and data files of every writer) and checkpoints
 * deltalog writes must decode to the same schema and the same row-group and column-chunk metadata
 * (statistics: the null count), or be left to parquet-mr (None) -- and the corpus's checkpoints
 * must all be decoded here. The checkpoint writer's tests check every file they write the same way
 * ([[ParquetFooterSuite.assertDecodedLikeParquetMr]]).
 */
class ParquetFooterSuite {

  private val corpus: NioPath =
    Paths.get(System.getProperty("deltalog.repo.root", "."), "..", "shared", "conformance").normalize()

  private def parquetFiles: Seq[NioPath] =
    if (!Files.isDirectory(corpus)) Nil
    else Files.walk(corpus).iterator().asScala.filter(p => Files.isRegularFile(p) && p.toString.endsWith(".parquet"))
      .toSeq.sortBy(_.toString)

  import ParquetFooterSuite._

  @Test def corpusFilesDecodeAsParquetMrDecodesThem(): Unit = {
    val files = parquetFiles
    assumeCorpus(files)
    var decoded = 0
    val left = Seq.newBuilder[String]
    files.foreach { f =>
      val theirs = try Some(parquetMr(f)) catch { case _: Exception => None }
      ParquetFooter.decode(map(f)) match {
        case Some(ours) =>
          assertTrue(theirs.isDefined, s"$f: parquet-mr cannot read this footer, ParquetFooter decoded one")
          assertSameFooter(f.toString, theirs.get, ours)
          decoded += 1
        case None => left += f.toString
      }
    }
    // every checkpoint and sidecar of the corpus is decoded here, not left to parquet-mr
    val leftLog = left.result().filter(_.contains("_delta_log"))
    assertEquals(Nil, leftLog, "log files left to parquet-mr")
    assertTrue(decoded > 100, s"decoded only $decoded of ${files.size} Parquet files")
  }

  private def assumeCorpus(files: Seq[NioPath]): Unit =
    assertTrue(files.exists(_.toString.contains("_delta_log")), s"no conformance corpus under $corpus")

  /** A Parquet file whose tail is `footer` (Thrift bytes), its length and `magic`. */
  private def fileWithFooter(footer: Array[Byte], magic: String = "PAR1", declaredLength: Int = -1): ByteBuffer = {
    val b = ByteBuffer.allocate(4 + footer.length + 8).order(ByteOrder.LITTLE_ENDIAN)
    b.put("PAR1".getBytes("US-ASCII")).put(footer).putInt(if (declaredLength >= 0) declaredLength else footer.length)
      .put(magic.getBytes("US-ASCII"))
    b.flip()
    b
  }

  private def realFooterBytes(): Array[Byte] = {
    val f = parquetFiles.find(_.toString.endsWith(".checkpoint.parquet")).getOrElse(fail("no checkpoint in the corpus"))
    val all = Files.readAllBytes(f)
    val len = ByteBuffer.wrap(all, all.length - 8, 4).order(ByteOrder.LITTLE_ENDIAN).getInt
    java.util.Arrays.copyOfRange(all, all.length - 8 - len, all.length - 8)
  }

  @Test def whatItCannotReadIsLeftToParquetMr(): Unit = {
    val footer = realFooterBytes()
    assertTrue(ParquetFooter.decode(fileWithFooter(footer)).isDefined)
    // encrypted footer magic, wrong magic, lengths outside the file, too short a file
    assertEquals(None, ParquetFooter.decode(fileWithFooter(footer, magic = "PARE")))
    assertEquals(None, ParquetFooter.decode(fileWithFooter(footer, magic = "XXXX")))
    assertEquals(None, ParquetFooter.decode(fileWithFooter(footer, declaredLength = footer.length + 5)))
    assertEquals(None, ParquetFooter.decode(fileWithFooter(footer, declaredLength = Int.MaxValue)))
    assertEquals(None, ParquetFooter.decode(fileWithFooter(footer, declaredLength = 0)))
    assertEquals(None, ParquetFooter.decode(ByteBuffer.wrap("PAR1PAR1".getBytes("US-ASCII"))))
    // every truncation and many corruptions of the Thrift bytes: None or the same footer as parquet-mr's, never an exception
    val converter = new ParquetMetadataConverter(org.apache.parquet.ParquetReadOptions.builder().build())
    def check(bytes: Array[Byte]): Unit = {
      var why: Exception = null
      val theirs = try Some(converter.readParquetMetadata(new java.io.ByteArrayInputStream(bytes))) catch { case e: Exception => why = e; None }
      ParquetFooter.decode(fileWithFooter(bytes)).foreach { ours =>
        assertTrue(theirs.isDefined, s"decoded what parquet-mr rejects: $why")
        assertSameFooter("corrupted footer", theirs.get, ours)
      }
    }
    (0 until footer.length by math.max(1, footer.length / 200)).foreach(n => check(java.util.Arrays.copyOf(footer, n)))
    val rnd = new scala.util.Random(Integer.getInteger("deltalog.test.seed", 11).toLong)
    (0 until Integer.getInteger("deltalog.test.footerCorruptions", 3000)).foreach { k =>
      val b = footer.clone()
      (0 to k % 3).foreach(_ => b(rnd.nextInt(b.length)) = rnd.nextInt(256).toByte) // 1-3 bytes
      check(b)
    }
  }
}

object ParquetFooterSuite {
  def map(file: NioPath): ByteBuffer = {
    val ch = java.nio.channels.FileChannel.open(file)
    try ch.map(java.nio.channels.FileChannel.MapMode.READ_ONLY, 0, ch.size()) finally ch.close()
  }

  def parquetMr(file: NioPath): ParquetMetadata = {
    val in = new LocalInputFile(file)
    val r = ParquetFileReader.open(in)
    try r.getFooter finally r.close()
  }

  /** Fails naming the first difference between `ours` and parquet-mr's footer `theirs` of `file`. */
  def assertSameFooter(file: String, theirs: ParquetMetadata, ours: ParquetMetadata): Unit = {
    assertEquals(theirs.getFileMetaData.getSchema, ours.getFileMetaData.getSchema, s"$file: schema")
    // the schemas print the same too (field ids, logical types, column orders are in equals, not all in toString)
    assertEquals(theirs.getFileMetaData.getSchema.toString, ours.getFileMetaData.getSchema.toString, s"$file: schema")
    val theirLeaves = theirs.getFileMetaData.getSchema.getColumns.asScala
    val ourLeaves = ours.getFileMetaData.getSchema.getColumns.asScala
    theirLeaves.zip(ourLeaves).foreach { case (a, b) =>
      assertEquals(a.getPrimitiveType.columnOrder, b.getPrimitiveType.columnOrder, s"$file: column order of $a")
    }
    assertEquals(theirs.getFileMetaData.getCreatedBy, ours.getFileMetaData.getCreatedBy, s"$file: created_by")
    assertEquals(theirs.getFileMetaData.getKeyValueMetaData, ours.getFileMetaData.getKeyValueMetaData, s"$file: key-value")
    assertEquals(theirs.getFileMetaData.getEncryptionType, ours.getFileMetaData.getEncryptionType, s"$file: encryption")
    assertEquals(theirs.getBlocks.size, ours.getBlocks.size, s"$file: row groups")
    theirs.getBlocks.asScala.zip(ours.getBlocks.asScala).zipWithIndex.foreach { case ((a, b), g) =>
      val at = s"$file: row group $g"
      assertEquals(a.getRowCount, b.getRowCount, s"$at: rows")
      assertEquals(a.getTotalByteSize, b.getTotalByteSize, s"$at: total byte size")
      assertEquals(a.getRowIndexOffset, b.getRowIndexOffset, s"$at: row index offset")
      assertEquals(a.getOrdinal, b.getOrdinal, s"$at: ordinal")
      assertEquals(a.getPath, b.getPath, s"$at: path")
      assertEquals(a.getStartingPos, b.getStartingPos, s"$at: starting position")
      assertEquals(a.getCompressedSize, b.getCompressedSize, s"$at: compressed size")
      assertEquals(a.getColumns.size, b.getColumns.size, s"$at: columns")
      a.getColumns.asScala.zip(b.getColumns.asScala).foreach { case (x, y) =>
        val c = s"$at, column ${x.getPath}"
        assertEquals(x.getPath, y.getPath, c)
        assertEquals(x.getPrimitiveType, y.getPrimitiveType, s"$c: type")
        assertEquals(x.getCodec, y.getCodec, s"$c: codec")
        assertEquals(x.getEncodings, y.getEncodings, s"$c: encodings")
        assertEquals(Option(x.getEncodingStats).map(_.getDataEncodings), Option(y.getEncodingStats).map(_.getDataEncodings), s"$c: data encodings")
        assertEquals(Option(x.getEncodingStats).map(_.getDictionaryEncodings), Option(y.getEncodingStats).map(_.getDictionaryEncodings), s"$c: dictionary encodings")
        Option(x.getEncodingStats).foreach { s =>
          assertEquals(s.usesV2Pages, y.getEncodingStats.usesV2Pages, s"$c: v2 pages")
          s.getDataEncodings.asScala.foreach(e => assertEquals(s.getNumDataPagesEncodedAs(e), y.getEncodingStats.getNumDataPagesEncodedAs(e), s"$c: $e pages"))
          s.getDictionaryEncodings.asScala.foreach(e => assertEquals(s.getNumDictionaryPagesEncodedAs(e), y.getEncodingStats.getNumDictionaryPagesEncodedAs(e), s"$c: $e dictionaries"))
        }
        assertEquals(x.getFirstDataPageOffset, y.getFirstDataPageOffset, s"$c: first data page")
        assertEquals(x.getDictionaryPageOffset, y.getDictionaryPageOffset, s"$c: dictionary page")
        assertEquals(x.hasDictionaryPage, y.hasDictionaryPage, s"$c: has dictionary page")
        assertEquals(x.getStartingPos, y.getStartingPos, s"$c: starting position")
        assertEquals(x.getValueCount, y.getValueCount, s"$c: values")
        assertEquals(x.getTotalSize, y.getTotalSize, s"$c: total size")
        assertEquals(x.getTotalUncompressedSize, y.getTotalUncompressedSize, s"$c: uncompressed size")
        assertEquals(x.getRowGroupOrdinal, y.getRowGroupOrdinal, s"$c: row group ordinal")
        assertEquals(x.getBloomFilterOffset, y.getBloomFilterOffset, s"$c: bloom filter offset")
        assertEquals(x.getBloomFilterLength, y.getBloomFilterLength, s"$c: bloom filter length")
        assertEquals(Option(x.getColumnIndexReference).map(r => (r.getOffset, r.getLength)),
          Option(y.getColumnIndexReference).map(r => (r.getOffset, r.getLength)), s"$c: column index")
        assertEquals(Option(x.getOffsetIndexReference).map(r => (r.getOffset, r.getLength)),
          Option(y.getOffsetIndexReference).map(r => (r.getOffset, r.getLength)), s"$c: offset index")
        val (sx, sy) = (x.getStatistics, y.getStatistics)
        assertEquals(sx.isNumNullsSet, sy.isNumNullsSet, s"$c: null count set")
        assertEquals(sx.getNumNulls, sy.getNumNulls, s"$c: null count")
        assertEquals(sx.`type`, sy.`type`, s"$c: statistics type")
        assertFalse(sy.hasNonNullValue, s"$c: no min/max kept")
        val (zx, zy) = (x.getSizeStatistics, y.getSizeStatistics)
        assertEquals(zx == null, zy == null, s"$c: size statistics")
        if (zx != null) {
          assertEquals(zx.isValid, zy.isValid, s"$c: size statistics valid")
          assertEquals(zx.getUnencodedByteArrayDataBytes, zy.getUnencodedByteArrayDataBytes, s"$c: unencoded bytes")
          assertEquals(zx.getRepetitionLevelHistogram, zy.getRepetitionLevelHistogram, s"$c: repetition histogram")
          assertEquals(zx.getDefinitionLevelHistogram, zy.getDefinitionLevelHistogram, s"$c: definition histogram")
        }
      }
    }
  }

  /** `file` is decoded (not left to parquet-mr) to parquet-mr's footer (checkpoint writer tests). */
  def assertDecodedLikeParquetMr(file: NioPath): Unit = {
    val ours = ParquetFooter.decode(map(file))
    assertTrue(ours.isDefined, s"$file: not decoded by ParquetFooter")
    assertSameFooter(file.toString, parquetMr(file), ours.get)
  }
}
