package io.deltalog.parquet

import java.nio.{ByteBuffer, ByteOrder}
import java.nio.file.Files

import scala.jdk.CollectionConverters._
import scala.util.Random

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.parquet.bytes.HeapByteBufferAllocator
import org.apache.parquet.column.ParquetProperties.WriterVersion
import org.apache.parquet.column.impl.ColumnReadStoreImpl
import org.apache.parquet.column.values.rle.RunLengthBitPackingHybridEncoder
import org.apache.parquet.example.data.simple.SimpleGroupFactory
import org.apache.parquet.hadoop.ParquetFileReader
import org.apache.parquet.hadoop.example.ExampleParquetWriter
import org.apache.parquet.hadoop.util.HadoopInputFile
import org.apache.parquet.io.api.{Binary, Converter, GroupConverter, PrimitiveConverter}
import org.apache.parquet.schema.{MessageType, MessageTypeParser}
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import io.deltalog.TestDirs

/**
 * [[HybridRle]] against parquet-mr's encoder, and the [[LeafDecoder]]s against parquet-mr's column
 * reader on files parquet-mr writes with V1 and V2 pages, with and without dictionaries (including
 * the fallback to PLAIN when a dictionary grows too large), nulls and many pages.
 */
class LeafDecoderSuite {

  @Test def hybridRleDecodesWhatParquetMrEncodes(): Unit = {
    val rnd = new Random(7)
    for (width <- 1 to 32; trial <- 0 until 4) {
      val n = 1 + rnd.nextInt(3000)
      val max = if (width == 32) Int.MaxValue.toLong else (1L << width) - 1
      // runs of equal values (RLE) mixed with noise (bit-packed)
      val values = new Array[Int](n)
      var i = 0
      while (i < n) {
        val run = if (rnd.nextBoolean()) 1 + rnd.nextInt(40) else 1
        val v = (rnd.nextLong() & Long.MaxValue) % (max + 1)
        var j = 0
        while (j < run && i < n) { values(i) = v.toInt; i += 1; j += 1 }
      }
      val enc = new RunLengthBitPackingHybridEncoder(width, 64, 1 << 20, HeapByteBufferAllocator.getInstance())
      values.foreach(v => enc.writeInt(v))
      val bytes = enc.toBytes.toByteArray
      val buf = ByteBuffer.wrap(("xx".getBytes ++ bytes)) // at an offset
      val out = new Array[Int](n)
      val end = HybridRle.decode(buf, 2, buf.limit(), width, n, out)
      assertArrayEquals(values, out, s"width $width trial $trial")
      assertTrue(end <= buf.limit())
    }
  }

  @Test def hybridRleRunsAndNthIndexAgreeWithDecode(): Unit = {
    val rnd = new Random(11)
    for (width <- Seq(1, 2, 3, 8, 13); trial <- 0 until 6) {
      val n = 1 + rnd.nextInt(5000)
      // mostly long runs of few values (levels), with noise that the encoder bit-packs
      val values = new Array[Int](n)
      var i = 0
      while (i < n) {
        val run = if (rnd.nextInt(4) == 0) 1 else 1 + rnd.nextInt(if (trial % 2 == 0) 3000 else 30)
        val v = rnd.nextInt(math.min(4, 1 << width))
        var j = 0
        while (j < run && i < n) { values(i) = v; i += 1; j += 1 }
      }
      val enc = new RunLengthBitPackingHybridEncoder(width, 64, 1 << 20, HeapByteBufferAllocator.getInstance())
      values.foreach(v => enc.writeInt(v))
      val bytes = enc.toBytes.toByteArray
      val buf = ByteBuffer.wrap("xyz".getBytes ++ bytes)
      // every run handed out, in order, covering exactly the values (a count below the encoded one too)
      val count = if (trial % 3 == 2) 1 + rnd.nextInt(n) else n
      val seen = new Array[Int](count)
      var next = 0
      HybridRle.foreachRun(buf, 3, buf.limit(), width, count, new HybridRle.RunVisitor {
        def run(start: Int, length: Int, value: Int): Boolean = {
          assertEquals(next, start)
          assertTrue(length > 0)
          java.util.Arrays.fill(seen, start, start + length, value)
          next = start + length
          true
        }
      })
      assertEquals(count, next)
      assertArrayEquals(values.take(count), seen, s"width $width trial $trial")
      for (value <- 0 until math.min(4, 1 << width)) {
        assertEquals(values.take(count).count(_ == value), HybridRle.countEqual(buf, 3, buf.limit(), width, count, value),
          s"width $width trial $trial count of $value")
      }
      for (value <- 0 until math.min(4, 1 << width); nth <- Seq(0L, 1L, 7L, count / 3L, count - 1L, count.toLong)) {
        val expected = values.take(count).zipWithIndex.filter(_._1 == value).map(_._2).lift(nth.toInt).getOrElse(-1)
        assertEquals(expected, HybridRle.indexOfNth(buf, 3, buf.limit(), width, count, value, nth),
          s"width $width trial $trial value $value nth $nth")
      }
    }
  }

  @Test def hybridRleRejectsTruncatedData(): Unit = {
    val enc = new RunLengthBitPackingHybridEncoder(5, 64, 1 << 20, HeapByteBufferAllocator.getInstance())
    (0 until 100).foreach(i => enc.writeInt(i % 32))
    val bytes = enc.toBytes.toByteArray
    val buf = ByteBuffer.wrap(bytes)
    assertThrows(classOf[IllegalStateException],
      () => HybridRle.decode(buf, 0, bytes.length / 2, 5, 100, new Array[Int](100)))
  }

  private val schema: MessageType = MessageTypeParser.parseMessageType(
    """message t {
      |  optional int64 a;
      |  optional int32 b;
      |  optional boolean c;
      |  optional binary d (UTF8);
      |  required int64 e;
      |  required boolean f;
      |  optional binary g (UTF8);
      |}""".stripMargin)

  private def writeFile(version: WriterVersion, dictionary: Boolean, rows: Int, seed: Int): Path = {
    val dir = TestDirs.create("leaf-decoder")
    val path = new Path(dir.resolve("t.parquet").toUri)
    val rnd = new Random(seed)
    val w = ExampleParquetWriter.builder(path).withConf(new Configuration()).withType(schema)
      .withWriterVersion(version).withDictionaryEncoding(dictionary).withPageSize(4096)
      .withDictionaryPageSize(2048).withRowGroupSize(1L << 20).build()
    val f = new SimpleGroupFactory(schema)
    try {
      (0 until rows).foreach { i =>
        val g = f.newGroup()
        // few distinct values first (dictionary), then many (dictionary falls back to PLAIN)
        val spread = if (i < rows / 2) 5 else 1000000
        if (rnd.nextInt(5) != 0) g.add("a", rnd.nextInt(spread).toLong * 1000003L - 7)
        if (rnd.nextInt(4) != 0) g.add("b", rnd.nextInt(spread) - 3)
        if (rnd.nextInt(3) != 0) g.add("c", rnd.nextBoolean())
        if (rnd.nextInt(6) != 0) g.add("d", s"v-${rnd.nextInt(spread)}-é")
        g.add("e", i.toLong)
        g.add("f", i % 3 == 0)
        if (i % 500 == 7) g.add("g", "") // almost always null, one empty string now and then
        w.write(g)
      }
    } finally w.close()
    path
  }

  /** Every slot of `column` as parquet-mr's column reader sees it (null: no value). */
  private def reference(file: Path, column: String): IndexedSeq[Any] = {
    val r = ParquetFileReader.open(HadoopInputFile.fromPath(file, new Configuration()))
    try {
      val d = schema.getColumnDescription(Array(column))
      val out = IndexedSeq.newBuilder[Any]
      var pages = r.readNextRowGroup()
      while (pages != null) {
        val store = new ColumnReadStoreImpl(pages, new Ignore, schema, "test")
        val cr = store.getColumnReader(d)
        var i = 0L
        while (i < cr.getTotalValueCount) {
          out += (if (cr.getCurrentDefinitionLevel < d.getMaxDefinitionLevel) null
          else d.getPrimitiveType.getPrimitiveTypeName.name match {
            case "INT64" => cr.getLong
            case "INT32" => cr.getInteger.toLong
            case "BOOLEAN" => cr.getBoolean
            case _ => cr.getBinary.toStringUsingUTF8
          })
          cr.consume()
          i += 1
        }
        pages = r.readNextRowGroup()
      }
      out.result()
    } finally r.close()
  }

  private def decoded(file: Path, column: String, mapped: Boolean = false): IndexedSeq[Any] = {
    val r = ParquetFileReader.open(HadoopInputFile.fromPath(file, new Configuration()))
    try {
      val d = schema.getColumnDescription(Array(column))
      val out = IndexedSeq.newBuilder[Any]
      var block = 0
      var pages = r.readNextRowGroup()
      while (pages != null) {
        val pr = if (!mapped) pages.getPageReader(d) else {
          // the same pages, parsed straight from a memory map of the file
          val chunk = r.getRowGroups.get(block).getColumns.asScala.find(_.getPath.toArray.sameElements(Array(column))).get
          assertTrue(MappedColumnChunk.applies(chunk))
          MappedColumnChunk.pageReader(java.nio.file.Paths.get(file.toUri), chunk, d).get
        }
        block += 1
        val total = pages.getRowCount
        val dec: LeafDecoder = d.getPrimitiveType.getPrimitiveTypeName.name match {
          case "INT64" | "INT32" => new LongLeafDecoder(pr, d)
          case "BOOLEAN" => new BooleanLeafDecoder(pr, d)
          case _ => new BinaryLeafDecoder(pr, d)
        }
        var i = 0L
        while (i < total) {
          val dl = dec.next()
          out += (if (dl < d.getMaxDefinitionLevel) null else dec match {
            case l: LongLeafDecoder => l.value
            case b: BooleanLeafDecoder => b.value
            case s: BinaryLeafDecoder =>
              val bytes = new Array[Byte](s.len)
              s.buf.duplicate().position(s.off).asInstanceOf[ByteBuffer].get(bytes)
              new String(bytes, "UTF-8")
          })
          i += 1
        }
        pages = r.readNextRowGroup()
      }
      out.result()
    } finally r.close()
  }

  @Test def decodersMatchParquetMrOnEveryPageKind(): Unit = {
    for (version <- Seq(WriterVersion.PARQUET_1_0, WriterVersion.PARQUET_2_0); dict <- Seq(true, false)) {
      val file = writeFile(version, dict, 20000, seed = version.ordinal * 2 + (if (dict) 1 else 0))
      for (c <- Seq("a", "b", "c", "d", "e", "f", "g")) {
        val want = reference(file, c)
        assertEquals(20000, want.size)
        assertEquals(want, decoded(file, c), s"$version dictionary=$dict column $c")
        assertEquals(want, decoded(file, c, mapped = true), s"$version dictionary=$dict column $c (mapped)")
      }
    }
  }

  /** [[PageLevelRuns]] gives every page's definition levels (V1 and V2 pages) as parquet-mr sees them. */
  @Test def pageLevelRunsMatchParquetMr(): Unit = {
    for (version <- Seq(WriterVersion.PARQUET_1_0, WriterVersion.PARQUET_2_0)) {
      val file = writeFile(version, dictionary = true, 20000, seed = 5 + version.ordinal)
      for (c <- Seq("a", "b", "c", "d", "e", "f", "g")) {
        val d = schema.getColumnDescription(Array(c))
        val want = reference(file, c).map(v => if (v == null) 0 else d.getMaxDefinitionLevel)
        val r = ParquetFileReader.open(HadoopInputFile.fromPath(file, new Configuration()))
        val got = IndexedSeq.newBuilder[Int]
        try {
          var pages = r.readNextRowGroup()
          while (pages != null) {
            val pr = pages.getPageReader(d)
            var page = pr.readPage()
            while (page != null) {
              var next = 0
              PageLevelRuns.definitionLevels(page, d, new HybridRle.RunVisitor {
                def run(start: Int, length: Int, level: Int): Boolean = {
                  assertEquals(next, start)
                  got ++= Iterator.fill(length)(level)
                  next += length
                  true
                }
              })
              assertEquals(page.getValueCount, next)
              page = pr.readPage()
            }
            pages = r.readNextRowGroup()
          }
        } finally r.close()
        assertEquals(want, got.result(), s"$version column $c")
      }
    }
    // a V1 page whose levels use the old BIT_PACKED encoding goes through parquet-mr's reader
    val d = schema.getColumnDescription(Array("a"))
    val levels = Seq(1, 1, 0, 1, 0, 0, 0, 1, 1, 0, 1)
    val w = new org.apache.parquet.column.values.bitpacking.BitPackingValuesWriter(1, 64, 1 << 16, HeapByteBufferAllocator.getInstance())
    levels.foreach(w.writeInteger)
    val values = ByteBuffer.allocate(8 * levels.sum).order(ByteOrder.LITTLE_ENDIAN)
    val bytes = org.apache.parquet.bytes.BytesInput.concat(w.getBytes, org.apache.parquet.bytes.BytesInput.from(values))
    val page = new org.apache.parquet.column.page.DataPageV1(bytes, levels.size, bytes.size.toInt,
      org.apache.parquet.column.statistics.Statistics.createStats(d.getPrimitiveType),
      org.apache.parquet.column.Encoding.BIT_PACKED, org.apache.parquet.column.Encoding.BIT_PACKED,
      org.apache.parquet.column.Encoding.PLAIN)
    val got = IndexedSeq.newBuilder[Int]
    PageLevelRuns.definitionLevels(page, d, new HybridRle.RunVisitor {
      def run(start: Int, length: Int, level: Int): Boolean = { got ++= Iterator.fill(length)(level); true }
    })
    assertEquals(levels, got.result())
  }

  @Test def truncatedPlainPageIsATypedError(): Unit = {
    // A PLAIN int64 page that claims more values than it holds: an IllegalStateException naming
    // the column (the checkpoint reader turns it into a corrupt-checkpoint error), never an
    // IndexOutOfBoundsException.
    val d = schema.getColumnDescription(Array("e"))
    val page = new org.apache.parquet.column.page.DataPageV1(
      org.apache.parquet.bytes.BytesInput.from(ByteBuffer.allocate(12).order(ByteOrder.LITTLE_ENDIAN).putLong(0, 42L)),
      3, 12, org.apache.parquet.column.statistics.Statistics.createStats(d.getPrimitiveType),
      org.apache.parquet.column.Encoding.RLE, org.apache.parquet.column.Encoding.RLE,
      org.apache.parquet.column.Encoding.PLAIN)
    val reader = new org.apache.parquet.column.page.PageReader {
      private var done = false
      override def readDictionaryPage() = null
      override def getTotalValueCount: Long = 3
      override def readPage() = if (done) null else { done = true; page }
    }
    val e = assertThrows(classOf[IllegalStateException], () => new LongLeafDecoder(reader, d).next())
    assertTrue(e.getMessage.contains("e"), e.getMessage)
  }

  private final class Ignore extends GroupConverter {
    override def getConverter(i: Int): Converter = new PrimitiveConverter {
      override def addBinary(v: Binary): Unit = ()
      override def addLong(v: Long): Unit = ()
      override def addInt(v: Int): Unit = ()
      override def addBoolean(v: Boolean): Unit = ()
    }
    override def start(): Unit = ()
    override def end(): Unit = ()
  }

  @Test def mappedChunkWithInconsistentHeadersIsLeftToParquetMr(): Unit = {
    val file = writeFile(WriterVersion.PARQUET_1_0, dictionary = false, 2000, seed = 9)
    val r = ParquetFileReader.open(HadoopInputFile.fromPath(file, new Configuration()))
    val chunk = try r.getRowGroups.get(0).getColumns.asScala.find(_.getPath.toArray.sameElements(Array("d"))).get
      finally r.close()
    val d = schema.getColumnDescription(Array("d"))
    val local = java.nio.file.Paths.get(file.toUri)
    assertTrue(MappedColumnChunk.pageReader(local, chunk, d).isDefined)
    // a chunk claimed shorter than its pages: the headers run past it, so no mapped reader
    val cut = org.apache.parquet.hadoop.metadata.ColumnChunkMetaData.get(chunk.getPath, chunk.getPrimitiveType,
      chunk.getCodec, chunk.getEncodingStats, chunk.getEncodings, chunk.getStatistics, chunk.getFirstDataPageOffset,
      chunk.getDictionaryPageOffset, chunk.getValueCount, chunk.getTotalSize / 2, chunk.getTotalUncompressedSize)
    assertEquals(None, MappedColumnChunk.pageReader(local, cut, d))
  }
}
