package io.deltalog.parquet

import java.nio.{ByteBuffer, ByteOrder}
import java.nio.file.{Files, Path => NioPath}

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

  private def corpus: NioPath = io.deltalog.ConformanceCorpus.root

  private def parquetFiles: Seq[NioPath] =
    Files.walk(corpus).iterator().asScala.filter(p => Files.isRegularFile(p) && p.toString.endsWith(".parquet"))
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

  /**
   * Every page header of every column chunk of the corpus's Parquet files (data files of every
   * writer and log files; V1 and V2 pages, dictionary pages, every codec) reads as parquet-mr's
   * Thrift reader reads it, and ends where parquet-mr's ends.
   */
  @Test def corpusPageHeadersReadAsParquetMrReadsThem(): Unit = {
    val files = parquetFiles
    assumeCorpus(files)
    var pages = 0
    val kinds = scala.collection.mutable.Set.empty[Int]
    files.foreach { f =>
      val footer = try Some(parquetMr(f)) catch { case _: Exception => None }
      footer.foreach { meta =>
        val buf = map(f)
        meta.getBlocks.forEach { block =>
          block.getColumns.forEach { c =>
            var pos = c.getStartingPos
            val end = c.getStartingPos + c.getTotalSize
            while (pos < end) {
              val in = org.apache.parquet.bytes.ByteBufferInputStream.wrap(buf.duplicate().position(pos.toInt).asInstanceOf[ByteBuffer].slice())
              val theirs = org.apache.parquet.format.Util.readPageHeader(in)
              val (ours, length) = ParquetFooterThrift.readPageHeader(buf, pos.toInt, end.toInt)
              val at = s"$f ${c.getPath} @ $pos"
              assertEquals(in.position(), length.toLong, at)
              assertEquals(theirs.getType.getValue, ours.pageType, at)
              assertEquals((theirs.getUncompressed_page_size, theirs.getCompressed_page_size),
                (ours.uncompressedSize, ours.compressedSize), at)
              assertEquals(theirs.isSetData_page_header, ours.hasDataHeader, at)
              assertEquals(theirs.isSetDictionary_page_header, ours.hasDictionaryHeader, at)
              assertEquals(theirs.isSetData_page_header_v2, ours.hasDataV2Header, at)
              if (ours.hasDataHeader) {
                val h = theirs.getData_page_header
                assertEquals(Seq(h.getNum_values, h.getEncoding.getValue, h.getDefinition_level_encoding.getValue,
                  h.getRepetition_level_encoding.getValue),
                  Seq(ours.numValues, ours.encoding, ours.definitionEncoding, ours.repetitionEncoding), at)
              }
              if (ours.hasDictionaryHeader) {
                val h = theirs.getDictionary_page_header
                assertEquals((h.getNum_values, h.getEncoding.getValue), (ours.numValues, ours.encoding), at)
              }
              if (ours.hasDataV2Header) {
                val h = theirs.getData_page_header_v2
                assertEquals(Seq(h.getNum_values, h.getNum_nulls, h.getNum_rows, h.getEncoding.getValue,
                  h.getDefinition_levels_byte_length, h.getRepetition_levels_byte_length),
                  Seq(ours.numValues, ours.numNulls, ours.numRows, ours.encoding, ours.definitionLength, ours.repetitionLength), at)
                assertEquals(!h.isSetIs_compressed || h.isIs_compressed, ours.isCompressed, at)
              }
              kinds += ours.pageType
              pages += 1
              pos += length + ours.compressedSize
            }
          }
        }
      }
    }
    println(s"[page headers] $pages page headers of ${files.size} Parquet files read as parquet-mr reads them")
    assertTrue(pages > 1000, s"$pages pages")
    // data pages V1 and V2 and dictionary pages are all in the corpus
    assertEquals(Set(0, 2, 3), kinds.toSet.intersect(Set(0, 2, 3)))
  }

  @Test def truncatedOrDamagedPageHeadersAreIllegalState(): Unit = {
    val f = parquetFiles.find(_.toString.endsWith(".checkpoint.parquet")).getOrElse(fail("no checkpoint in the corpus"))
    val meta = parquetMr(f)
    val c = meta.getBlocks.get(0).getColumns.get(0)
    val buf = map(f)
    val pos = c.getStartingPos.toInt
    val (_, length) = ParquetFooterThrift.readPageHeader(buf, pos, pos + c.getTotalSize.toInt)
    // the header cut short: reading it needs bytes past the end it is given
    assertThrows(classOf[IllegalStateException], () => ParquetFooterThrift.readPageHeader(buf, pos, pos + length - 1))
    // a header whose first field has the wrong Thrift type
    val bad = ByteBuffer.wrap(Array[Byte](0x18, 0x02, 0x00))
    assertThrows(classOf[IllegalStateException], () => ParquetFooterThrift.readPageHeader(bad, 0, 3))
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

  /** Asserts `field(theirs) == field(ours)` for each named field, naming `at` and the field on failure. */
  private def sameFields[A](at: String, theirs: A, ours: A)(fields: (String, A => Any)*): Unit =
    fields.foreach { case (name, field) => assertEquals(field(theirs), field(ours), s"$at: $name") }

  private def indexRef(r: org.apache.parquet.internal.hadoop.metadata.IndexReference): Option[(Long, Int)] =
    Option(r).map(x => (x.getOffset, x.getLength))

  /** Fails naming the first difference between `ours` and parquet-mr's footer `theirs` of `file`. */
  def assertSameFooter(file: String, theirs: ParquetMetadata, ours: ParquetMetadata): Unit = {
    // the schemas print the same too (field ids, logical types, column orders are in equals, not all in toString)
    sameFields(file, theirs.getFileMetaData, ours.getFileMetaData)(
      "schema" -> (_.getSchema), "schema" -> (_.getSchema.toString), "created_by" -> (_.getCreatedBy),
      "key-value" -> (_.getKeyValueMetaData), "encryption" -> (_.getEncryptionType))
    theirs.getFileMetaData.getSchema.getColumns.asScala.zip(ours.getFileMetaData.getSchema.getColumns.asScala)
      .foreach { case (a, b) => sameFields(s"$file: column order of $a", a, b)("" -> (_.getPrimitiveType.columnOrder)) }
    assertEquals(theirs.getBlocks.size, ours.getBlocks.size, s"$file: row groups")
    theirs.getBlocks.asScala.zip(ours.getBlocks.asScala).zipWithIndex.foreach { case ((a, b), g) =>
      val at = s"$file: row group $g"
      sameFields(at, a, b)("rows" -> (_.getRowCount), "total byte size" -> (_.getTotalByteSize),
        "row index offset" -> (_.getRowIndexOffset), "ordinal" -> (_.getOrdinal), "path" -> (_.getPath),
        "starting position" -> (_.getStartingPos), "compressed size" -> (_.getCompressedSize),
        "columns" -> (_.getColumns.size))
      a.getColumns.asScala.zip(b.getColumns.asScala).foreach { case (x, y) =>
        val c = s"$at, column ${x.getPath}"
        sameFields(c, x, y)("path" -> (_.getPath), "type" -> (_.getPrimitiveType), "codec" -> (_.getCodec),
          "encodings" -> (_.getEncodings),
          "data encodings" -> (m => Option(m.getEncodingStats).map(_.getDataEncodings)),
          "dictionary encodings" -> (m => Option(m.getEncodingStats).map(_.getDictionaryEncodings)),
          "first data page" -> (_.getFirstDataPageOffset), "dictionary page" -> (_.getDictionaryPageOffset),
          "has dictionary page" -> (_.hasDictionaryPage), "starting position" -> (_.getStartingPos),
          "values" -> (_.getValueCount), "total size" -> (_.getTotalSize),
          "uncompressed size" -> (_.getTotalUncompressedSize), "row group ordinal" -> (_.getRowGroupOrdinal),
          "bloom filter offset" -> (_.getBloomFilterOffset), "bloom filter length" -> (_.getBloomFilterLength),
          "column index" -> (m => indexRef(m.getColumnIndexReference)),
          "offset index" -> (m => indexRef(m.getOffsetIndexReference)),
          "null count set" -> (_.getStatistics.isNumNullsSet), "null count" -> (_.getStatistics.getNumNulls),
          "statistics type" -> (_.getStatistics.`type`), "size statistics" -> (_.getSizeStatistics == null))
        Option(x.getEncodingStats).foreach { s =>
          val t = y.getEncodingStats
          assertEquals(s.usesV2Pages, t.usesV2Pages, s"$c: v2 pages")
          s.getDataEncodings.asScala.foreach(e => assertEquals(s.getNumDataPagesEncodedAs(e), t.getNumDataPagesEncodedAs(e), s"$c: $e pages"))
          s.getDictionaryEncodings.asScala.foreach(e => assertEquals(s.getNumDictionaryPagesEncodedAs(e), t.getNumDictionaryPagesEncodedAs(e), s"$c: $e dictionaries"))
        }
        assertFalse(y.getStatistics.hasNonNullValue, s"$c: no min/max kept")
        if (x.getSizeStatistics != null) sameFields(c, x.getSizeStatistics, y.getSizeStatistics)(
          "size statistics valid" -> (_.isValid), "unencoded bytes" -> (_.getUnencodedByteArrayDataBytes),
          "repetition histogram" -> (_.getRepetitionLevelHistogram),
          "definition histogram" -> (_.getDefinitionLevelHistogram))
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
