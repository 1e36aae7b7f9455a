package io.deltalog.log

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.Files

import scala.util.{Failure, Random, Success, Try}

import com.fasterxml.jackson.databind.node.ObjectNode
import org.apache.hadoop.fs.Path
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import io.deltalog.TestDirs
import io.deltalog.actions._

/**
 * [[FileActionLineParser]] (through [[CommitReader.parseLine]] and the replay read) against the
 * codec path of the reader ([[CommitReader.parseWithCodec]]: strict UTF-8 decoding, then
 * [[ActionCodec]]): every line gives the same action (and the same JSON, unknown fields
 * included) or the same error.
 */
class FileActionLineParserSuite {

  private def codec(bytes: Array[Byte]): Try[Action] = Try(CommitReader.parseWithCodec(bytes, 0, bytes.length, "f.json", 7))
  private def reader(bytes: Array[Byte]): Try[Action] = Try(CommitReader.parseLine(bytes, 0, bytes.length, "f.json", 7))

  /** True when the byte parser itself accepts the line (no codec fallback). */
  private def fast(bytes: Array[Byte]): Boolean = new FileActionLineParser(bytes, null).parse(0, bytes.length) != null

  /** The line read as a one-line commit for replay (plain adds as rows, bytes overwritten). */
  private def replayRead(bytes: Array[Byte]): Try[Action] = Try {
    val copy = bytes.clone()
    val rows = new PlainAddsBuilder(copy, 1, FileKeys.Local)
    val entries = CommitReader.parseInto(copy, copy.length, "f.json", null, rows)
    val plain = rows.result()
    (0 until plain.length).foreach { i =>
      assertEquals(FileKeys.Local.key(plain.toAddFile(i)), plain.key(i, FileKeys.Local))
      val set = new FileKeySet()
      assertTrue(plain.addKeyTo(set, i, FileKeys.Local))
      assertTrue(set.contains(FileKeys.Local.key(plain.toAddFile(i))))
    }
    CommitReader.materialize(entries, plain).headOption.orNull
  }

  private def show(bytes: Array[Byte]): String =
    new String(bytes, UTF_8).flatMap(c => if (c < 0x20) f"\\x$c%02x" else c.toString)

  private def assertSameAsCodec(bytes: Array[Byte]): Unit = {
    val label = show(bytes)
    assertSame(label, codec(bytes), reader(bytes))
    if (!bytes.contains('\n'.toByte)) {
      assertSame(label + " (replay read)", Try(CommitReader.parseWithCodec(bytes, 0, bytes.length, "f.json", 1)),
        replayRead(bytes))
    }
  }

  private def assertSame(label: String, expected: Try[Action], got: Try[Action]): Unit = {
    (expected, got) match {
      case (Success(e: MalformedAction), Success(g: MalformedAction)) =>
        assertEquals(e.name, g.name, label)
        assertEquals(e.error.getMessage, g.error.getMessage, label)
      case (Success(e), Success(g)) =>
        assertEquals(e, g, label)
        if (e != null) assertEquals(e.json, g.json, label)
      case (Failure(e), Failure(g)) =>
        assertEquals(e.getClass, g.getClass, label)
        assertEquals(e.getMessage, g.getMessage, label)
      case other => fail(s"$label: codec and reader differ: $other")
    }
  }

  private def assertSameAsCodec(line: String): Unit = assertSameAsCodec(line.getBytes(UTF_8))

  private val plainLines = Seq(
    """{"add":{"path":"a","size":1,"modificationTime":2}}""",
    """{"add":{"path":"part-0.parquet","partitionValues":{},"size":10,"modificationTime":20,"dataChange":true,"stats":"{\"numRecords\":3,\"minValues\":{\"a\":\"x\\\"y\"}}"}}""",
    """{"add":{"modificationTime":2,"size":1,"path":"a","dataChange":false}}""",
    """{"add":{"path":"a%20b/c=1/d","partitionValues":{"c":"1","d":null},"size":1,"modificationTime":2}}""",
    """{"add":{"path":"é/日本/😀","partitionValues":{"é":"日本","k":""},"size":0,"modificationTime":-5,"stats":"é\"😀"}}""",
    "{\"add\":{\"path\":\"\\u0061\\u00e9\\u65e5\\ud83d\\ude00\",\"size\":1,\"modificationTime\":2,\"stats\":\"\\u0000\\u001f\\\\\\/\\b\\f\\n\\r\\t\"}}",
    " \t{ \"add\" :\t{ \"path\" : \"a\" , \"size\" : 1 ,\r\"modificationTime\" : 2 } } \t",
    """{"add":{"path":"","size":123456789012345678,"modificationTime":-123456789012345678,"stats":""}}""",
    """{"add":{"path":"a","size":-0,"modificationTime":0}}""",
    """{"remove":{"path":"a"}}""",
    """{"remove":{"path":"a","deletionTimestamp":5,"dataChange":true,"extendedFileMetadata":true,"partitionValues":{"p":null},"size":7,"stats":"s","tags":{},"baseRowId":1,"defaultRowCommitVersion":2}}""",
    """{"add":{"path":"a","partitionValues":{"x":null,"y":"1"},"size":1,"modificationTime":2,"dataChange":false,"stats":"{\"numRecords\":3}","tags":{"t":"v","u":""},"deletionVector":{"storageType":"u","pathOrInlineDv":"ab^-aqEH.-t@S}K{vb[*k^","offset":1,"sizeInBytes":36,"cardinality":2},"baseRowId":4,"defaultRowCommitVersion":5,"clusteringProvider":"liquid"}}""",
    """{"add":{"path":"a","size":1,"modificationTime":2,"deletionVector":{"cardinality":1,"sizeInBytes":4,"pathOrInlineDv":"xyz","storageType":"i","maxRowIndex":9,"offset":2147483647}}}""",
    """{"remove":{"path":"a","deletionVector":{"storageType":"p","pathOrInlineDv":"s3://b/x","offset":-2147483648,"sizeInBytes":1,"cardinality":1}}}""")

  @Test def modelledLinesTakeTheByteParserAndEqualTheCodec(): Unit = {
    plainLines.foreach { l =>
      assertTrue(fast(l.getBytes(UTF_8)), l)
      assertSameAsCodec(l)
    }
  }

  @Test def unusualLinesGiveTheCodecResultOrError(): Unit = {
    val a = """"path":"a","size":1,"modificationTime":2"""
    val lines = Seq(
      // explicit nulls, unknown fields, other types: kept or rejected by the codec
      s"""{"add":{$a,"stats":null}}""",
      s"""{"add":{$a,"dataChange":null}}""",
      s"""{"add":{$a,"partitionValues":null}}""",
      s"""{"add":{$a,"tags":{"t":null}}}""",
      s"""{"add":{$a,"tags":null}}""",
      s"""{"add":{$a,"unknown":{"x":[1,2.50]}}}""",
      s"""{"add":{$a,"dataChange":"true"}}""",
      s"""{"add":{$a,"partitionValues":{"k":1}}}""",
      s"""{"add":{$a,"partitionValues":[]}}""",
      s"""{"add":{$a,"deletionVector":{"storageType":"i","pathOrInlineDv":"xyz","sizeInBytes":4,"cardinality":1,"extra":true}}}""",
      s"""{"add":{$a,"deletionVector":{"storageType":"i","pathOrInlineDv":"xyz","sizeInBytes":4}}}""",
      s"""{"add":{$a,"deletionVector":{"storageType":"i","pathOrInlineDv":"xyz","sizeInBytes":4,"cardinality":1,"offset":null}}}""",
      s"""{"add":{$a,"deletionVector":{"storageType":"u","pathOrInlineDv":"p","offset":3000000000,"sizeInBytes":1,"cardinality":1}}}""",
      s"""{"add":{$a,"deletionVector":{"storageType":"u","storageType":"u","pathOrInlineDv":"p","sizeInBytes":1,"cardinality":1}}}""",
      s"""{"add":{$a,"deletionVector":null}}""",
      s"""{"remove":{"path":"a","clusteringProvider":"liquid"}}""",
      s"""{"remove":{"path":"a","extendedFileMetadata":null}}""",
      s"""{"remove":{"path":"a","deletionTimestamp":12345678901234567890}}""",
      // numbers
      """{"add":{"path":"a","size":1.0,"modificationTime":2}}""",
      """{"add":{"path":"a","size":1e3,"modificationTime":2}}""",
      """{"add":{"path":"a","size":1E3,"modificationTime":2}}""",
      """{"add":{"path":"a","size":01,"modificationTime":2}}""",
      """{"add":{"path":"a","size":-01,"modificationTime":2}}""",
      """{"add":{"path":"a","size":+1,"modificationTime":2}}""",
      """{"add":{"path":"a","size":-,"modificationTime":2}}""",
      """{"add":{"path":"a","size":1234567890123456789,"modificationTime":2}}""",
      """{"add":{"path":"a","size":-9223372036854775808,"modificationTime":2}}""",
      """{"add":{"path":"a","size":9223372036854775808,"modificationTime":2}}""",
      """{"add":{"path":"a","size":"1","modificationTime":2}}""",
      """{"add":{"path":"a","size":1x,"modificationTime":2}}""",
      """{"add":{"path":"a","size":1,"modificationTime":2,"dataChange":tru}}""",
      """{"add":{"path":"a","size":1,"modificationTime":2,"dataChange":truex}}""",
      // structure
      """{"add":{"path":"a","size":1,"size":2,"modificationTime":2}}""",
      """{"add":{"path":"a","partitionValues":{"k":"1","k":"2"},"size":1,"modificationTime":2}}""",
      """{"add":{"path":"a","modificationTime":2}}""",
      """{"add":{"path":"a","size":1,"modificationTime":2,}}""",
      """{"add":{"path":"a","size":1,"modificationTime":2}} x""",
      """{"add":{"path":"a","size":1,"modificationTime":2}}}""",
      """{"add":{"path":"a","size":1,"modificationTime":2}""",
      """{"add":{"path":"a","size":1,"modificationTime":2},"remove":{"path":"b"}}""",
      """{"add":{"path":"a","size":1,"modificationTime":2},"future":{"x":1}}""",
      """{"future":{"x":1},"add":{"path":"a","size":1,"modificationTime":2}}""",
      """{"add":{"path":"a" "size":1,"modificationTime":2}}""",
      """{"add":{"path":"a","size":1,"modificationTime":2,"":1}}""",
      """{"~u0061dd":{"path":"a","size":1,"modificationTime":2}}""",
      """{"add":{"p~u0061th":"a","size":1,"modificationTime":2}}""",
      """{"add":{"path":"a","partitionValues":{"~u00e9":"x"},"size":1,"modificationTime":2}}""",
      """{"add":null}""", """{"add":[]}""", """{"add":"x"}""", """{"add":{}}""", """{"remove":{}}""",
      """{"add":{"path":"a","size":1,"modificationTime":2}} // comment""",
      """{'add':{"path":"a","size":1,"modificationTime":2}}""",
      """{"add":{"path":'a',"size":1,"modificationTime":2}}""",
      """{"txn":{"appId":"a","version":1}}""",
      """{"commitInfo":{"timestamp":1,"inCommitTimestamp":7}}""",
      """{"protocol":{"minReaderVersion":"bad"}}""",
      "", " ", "\t \r", "not json", "[]", "{}", "null",
      // strings
      "{\"add\":{\"path\":\"a\",\"size\":1,\"modificationTime\":2,\"stats\":\"tab\there\"}}",
      "{\"add\":{\"path\":\"a\\u0000\",\"size\":1,\"modificationTime\":2,\"stats\":\"\\u0001\"}}",
      """{"add":{"path":"a","size":1,"modificationTime":2,"stats":"bad \q escape"}}""",
      """{"add":{"path":"a","size":1,"modificationTime":2,"stats":"~ud83d"}}""",
      """{"add":{"path":"a","size":1,"modificationTime":2,"stats":"~ude00x"}}""",
      """{"add":{"path":"a","size":1,"modificationTime":2,"stats":"~ud83d~u0041"}}""",
      """{"add":{"path":"a","size":1,"modificationTime":2,"stats":"~ud83dx"}}""",
      """{"add":{"path":"a","size":1,"modificationTime":2,"stats":"~uZZZZ"}}""",
      """{"add":{"path":"a","size":1,"modificationTime":2,"stats":"~u12"}}""",
      """{"add":{"path":"a","size":1,"modificationTime":2,"stats":"~U0041"}}""",
      """{"add":{"path":"a","size":1,"modificationTime":2,"stats":"unterminated}}""",
      """{"add":{"path":"a","size":1,"modificationTime":2,"stats":"ends in backslash\""")
    // (~u stands for a backslash-u escape in the JSON text)
    lines.map(_.replace("~u", "\\u").replace("~U", "\\U")).foreach(assertSameAsCodec)
  }

  @Test def invalidUtf8IsRejectedAsTheCodecPathRejectsIt(): Unit = {
    val head = """{"add":{"path":"a","size":1,"modificationTime":2,"stats":"""".getBytes(UTF_8)
    val tail = "\"}}".getBytes(UTF_8)
    val sequences: Seq[Array[Int]] = Seq(
      Array(0xc3, 0xa9), Array(0xe6, 0x97, 0xa5), Array(0xf0, 0x9f, 0x98, 0x80), Array(0xef, 0xbf, 0xbf),
      Array(0xf4, 0x8f, 0xbf, 0xbf), Array(0xed, 0x9f, 0xbf), Array(0xee, 0x80, 0x80), Array(0xe0, 0xa0, 0x80),
      Array(0xc0, 0xaf), Array(0xc1, 0xbf), Array(0xe0, 0x80, 0xaf), Array(0xed, 0xa0, 0x80), Array(0xf0, 0x80, 0x80, 0xaf),
      Array(0xf4, 0x90, 0x80, 0x80), Array(0xf5, 0x80, 0x80, 0x80), Array(0x80), Array(0xbf), Array(0xff), Array(0xfe),
      Array(0xc3), Array(0xe6, 0x97), Array(0xf0, 0x9f, 0x98), Array(0xc3, 0x41), Array(0xe6, 0x41, 0xa5),
      Array(0xf0, 0x9f, 0x41, 0x80), Array(0xc3, 0x22))
    for (seq <- sequences; pad <- 0 to 9) {
      val body = Array.fill[Byte](pad)('x') ++ seq.map(_.toByte) ++ Array.fill[Byte](pad % 3)('y')
      assertSameAsCodec(head ++ body ++ tail)
      // at the end of a line cut short, and in a path
      assertSameAsCodec(head ++ body)
      assertSameAsCodec("""{"add":{"size":1,"modificationTime":2,"path":"""".getBytes(UTF_8) ++ body ++ tail)
    }
  }

  @Test def escapesAtEveryPositionOfAWord(): Unit = {
    // the parser copies eight bytes at a time: put escapes and specials on every offset
    val specials = Seq("\\\"", "\\\\", "\\/", "\\n", "\\u00e9", "\\ud83d\\ude00", "é", "😀", "\\u0000")
    for (pre <- 0 to 17; s <- specials; post <- Seq(0, 1, 7, 8, 9)) {
      val v = "x" * pre + s + "z" * post
      val line = s"""{"add":{"path":"$v","size":1,"modificationTime":2,"stats":"$v"}}"""
      assertTrue(fast(line.getBytes(UTF_8)), line)
      assertSameAsCodec(line)
    }
  }

  @Test def linesEndAtNewlinesOnly(): Unit = {
    val add = """{"add":{"path":"a","size":1,"modificationTime":2,"stats":"{}"}}"""
    val texts = Seq(s"$add\n$add", s"$add\r\n$add\r\n", s"$add \t\r\n\n\n$add", s"$add\r\r\n", s"$add\n\n",
      s"\n$add", s"$add$add", s"$add\n{", s"$add \r", s"  $add  ", s"$add\r \n$add",
      "{\"add\":{\"path\":\"a\",\n\"size\":1,\"modificationTime\":2}}", // one object over two lines
      "{\"add\":{\"path\":\"a\n\",\"size\":1,\"modificationTime\":2}}")
    for (text <- texts) {
      val bytes = text.getBytes(UTF_8)
      // oracle: split at \n, drop one trailing \r, the codec path per line
      val expected = Try(text.split("\n", -1).toSeq.zipWithIndex.flatMap { case (l, i) =>
        val b = (if (l.endsWith("\r")) l.dropRight(1) else l).getBytes(UTF_8)
        Option(CommitReader.parseWithCodec(b, 0, b.length, "f.json", i + 1))
      })
      val read = Try(CommitReader.parseBytes(bytes, "f.json").toSeq)
      val replay = Try {
        val copy = bytes.clone()
        val rows = new PlainAddsBuilder(copy, 1, FileKeys.Local)
        CommitReader.materialize(CommitReader.parseInto(copy, copy.length, "f.json", null, rows), rows.result()).toSeq
      }
      for (got <- Seq(read, replay)) (expected, got) match {
        case (Success(e), Success(g)) => assertEquals(e, g, show(bytes))
        case (Failure(e), Failure(g)) => assertEquals(e.getMessage, g.getMessage, show(bytes))
        case other => fail(s"${show(bytes)}: $other")
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Randomised: actions serialised by Jackson, re-formatted and mutated.

  private val alphabet: IndexedSeq[String] = (('a' to 'z') ++ ('0' to '9')).map(_.toString) ++
    Seq("\"", "\\", "/", "%20", " ", "\u0000", "\u0001", "\n", "\t", "\u001f", "\u007f", "\u0080", "é", "ß",
      "日", "\u2028", "\uffff", "😀", "\ud800\udc00", "{", "}", ":", ",")

  private def randomString(r: Random, max: Int): String = {
    val n = r.nextInt(max + 1)
    val sb = new StringBuilder
    (0 until n).foreach(_ => sb ++= (if (r.nextInt(3) == 0) alphabet(r.nextInt(alphabet.length)) else "x"))
    sb.toString
  }

  private def randomMap(r: Random, allowNull: Boolean): Map[String, String] =
    (0 until r.nextInt(4)).map(_ => randomString(r, 5) -> (if (allowNull && r.nextInt(4) == 0) null else randomString(r, 8)))
      .toMap

  private def randomAction(r: Random): Action = {
    def opt[T](v: => T): Option[T] = if (r.nextInt(3) == 0) Some(v) else None
    def dv = DeletionVectorDescriptor(if (r.nextBoolean()) "u" else "i", randomString(r, 30), opt(r.nextInt()),
      r.nextInt(1000), r.nextLong(), opt(r.nextLong()))
    def long = r.nextInt(8) match {
      case 0 => if (r.nextBoolean()) Long.MaxValue - r.nextInt(3) else Long.MinValue + r.nextInt(3) // 19 digits
      case 1 | 2 => r.nextLong() / 10
      case 3 => r.nextInt(10).toLong
      case 4 => -r.nextInt(1000).toLong
      case _ => 1700000000000L + r.nextInt()
    }
    if (r.nextInt(4) > 0) {
      val plain = r.nextBoolean()
      AddFile(randomString(r, 40), randomMap(r, allowNull = true), long, long, r.nextBoolean(),
        opt(randomString(r, 200)),
        if (plain) None else opt(randomMap(r, allowNull = false)),
        if (plain) None else opt(dv),
        if (plain) None else opt(long), if (plain) None else opt(long), if (plain) None else opt(randomString(r, 6)))
    } else {
      RemoveFile(randomString(r, 40), opt(long), r.nextBoolean(), opt(r.nextBoolean()),
        opt(randomMap(r, allowNull = true)), opt(long), opt(randomString(r, 100)), opt(randomMap(r, allowNull = false)),
        opt(dv), opt(long), opt(long))
    }
  }

  /** Field order shuffled, some characters written as backslash-u escapes, blanks between tokens. */
  private def reformat(r: Random, a: Action): String = {
    val node = a.toJsonNode
    val shuffled = Action.mapper.createObjectNode()
    val names = Vector.newBuilder[String]
    node.fieldNames().forEachRemaining(n => names += n)
    r.shuffle(names.result()).foreach(n => shuffled.set(n, node.get(n)): ObjectNode)
    val wrapper = Action.mapper.createObjectNode()
    wrapper.set(a.actionName, shuffled): ObjectNode
    var text =
      if (r.nextBoolean()) Action.mapper.writeValueAsString(wrapper)
      else {
        // pretty printed: raw newlines only between tokens; make them other blanks
        val blank = Seq(" ", "\t", "\r", "  ")(r.nextInt(4))
        Action.mapper.writerWithDefaultPrettyPrinter().writeValueAsString(wrapper).replace("\n", blank)
      }
    if (r.nextBoolean()) {
      // \\u-escape some non-ASCII characters inside strings (they are never structural)
      val sb = new StringBuilder
      var i = 0
      while (i < text.length) {
        val n = Character.charCount(text.codePointAt(i)) // a surrogate pair is escaped whole or not at all
        if (text.charAt(i) >= 0x80 && r.nextBoolean()) (i until i + n).foreach(k => sb ++= f"\\u${text.charAt(k).toInt}%04x")
        else sb ++= text.substring(i, i + n)
        i += n
      }
      text = sb.toString
    }
    text
  }

  private val interestingBytes: Array[Byte] =
    "\"\\{}[],:0-1.eEtfnu \t\r/x".getBytes(UTF_8) ++ Array(0x00, 0x1f, 0x7f, 0x80, 0xbf, 0xc3, 0xe6, 0xed, 0xf0, 0xff).map(_.toByte)

  private def mutate(r: Random, b: Array[Byte]): Array[Byte] = {
    if (b.isEmpty) return b
    val i = r.nextInt(b.length)
    r.nextInt(3) match {
      case 0 => b.patch(i, Nil, 1)
      case 1 => b.patch(i, Seq(interestingBytes(r.nextInt(interestingBytes.length))), 0)
      case _ => b.updated(i, interestingBytes(r.nextInt(interestingBytes.length)))
    }
  }

  @Test def randomActionsAndMutationsAgreeWithTheCodec(): Unit = {
    val r = new Random(20240611L)
    var accepted = 0
    (0 until 4000).foreach { _ =>
      val a = randomAction(r)
      val bytes = (if (r.nextBoolean()) a.json else reformat(r, a)).getBytes(UTF_8)
      if (fast(bytes)) accepted += 1
      assertSameAsCodec(bytes)
      assertEquals(Success(a), reader(bytes).map(x => x))
      var m = bytes
      (0 until 3).foreach { _ =>
        m = mutate(r, m)
        assertSameAsCodec(m)
      }
    }
    assertTrue(accepted > 2000, s"only $accepted lines took the byte parser")
  }

  // ---------------------------------------------------------------------------------------------
  // Replay read: plain adds kept column-wise.

  @Test def replayReadKeepsPlainAddsByRowAndRebuildsTheSameActions(): Unit = {
    val r = new Random(7L)
    val lines: Seq[String] = Seq(
      """{"commitInfo":{"timestamp":1,"inCommitTimestamp":7}}""",
      """{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}""",
      "") ++ plainLines ++ (0 until 300).map(_ => randomAction(r).json) ++ Seq(
      """{"add":{"path":"a","size":1,"modificationTime":2,"future":1}}""",
      """{"add":{"path":"a b","size":1,"modificationTime":2,"stats":null}}""", "  ")
    val text = r.shuffle(lines).map(l => if (r.nextBoolean()) l + "\r" else l).mkString("\n")
    val dir = TestDirs.create("line-parser")
    val f = dir.resolve(f"${3}%020d.json")
    Files.write(f, text.getBytes(UTF_8))
    val p = new Path(f.toUri)
    val fs = p.getFileSystem(LogTestSupport.conf)
    val st = fs.getFileStatus(p)
    val keys = FileKeys.Local
    val commitReader = new CommitReader(fs)

    val expected = text.split("\n", -1).toSeq.zipWithIndex.flatMap { case (l, i) =>
      val b = l.getBytes(UTF_8)
      Option(CommitReader.parseWithCodec(b, 0, b.length, p.toString, i + 1))
    }
    val replay = commitReader.readForReplay(st, keys)
    assertEquals(3L, replay.version)
    assertTrue(replay.plainAdds.length > 30, replay.plainAdds.length.toString)
    assertEquals(expected, replay.actions.toSeq)
    assertEquals(expected.map(_.json), replay.actions.toSeq.map(_.json))
    assertEquals(expected, commitReader.read(st).actions.toSeq)
    assertEquals(Some(7L), replay.inCommitTimestamp)

    // newest first: rows in reverse order, interleaved with the other actions
    val visited = Vector.newBuilder[Action]
    val chunkByRow = new FileChunkBuilder(4)
    val chunkByAction = new FileChunkBuilder(4)
    replay.foreachReverse(
      row => {
        val a = replay.plainAdds.toAddFile(row)
        visited += a
        assertEquals(keys.key(a), replay.plainAdds.key(row, keys))
        replay.plainAdds.appendTo(chunkByRow, row)
        chunkByAction += a
      },
      a => visited += a)
    assertEquals(expected.reverse, visited.result())
    val (c1, c2) = (chunkByRow.result(), chunkByAction.result())
    assertEquals(c2.length, c1.length)
    (0 until c1.length).foreach(i => assertEquals(c2.get(i), c1.get(i)))
    // without keys computed while reading
    val noKeys = new CommitReader(fs).readForReplay(st, null)
    (0 until noKeys.plainAdds.length).foreach(i =>
      assertEquals(replay.plainAdds.key(i, keys), noKeys.plainAdds.key(i, keys)))
  }
}
