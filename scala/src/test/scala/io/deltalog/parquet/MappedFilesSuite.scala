package io.deltalog.parquet

import java.nio.file.{Files, Path => NioPath}
import java.nio.file.attribute.FileTime

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import io.deltalog.TestDirs

/** [[MappedFiles]] keeps a file's map (and footer) for the next read, and never serves a stale one. */
class MappedFilesSuite {
  private def temp(name: String, bytes: Array[Byte]): NioPath = {
    val dir = TestDirs.create("deltalog-mapped")
    val f = dir.resolve(name)
    Files.write(f, bytes)
    f
  }

  private def content(m: MappedFiles.Mapped): String = {
    val b = new Array[Byte](m.map.capacity())
    m.map.get(0, b)
    new String(b, "UTF-8")
  }

  @Test def aFileReadAgainKeepsItsMapAndFooter(): Unit = {
    val f = temp("a.parquet", "first".getBytes("UTF-8"))
    val before = MappedFiles.mapsCreated.get()
    val a = MappedFiles(f).get
    val b = MappedFiles(f).get
    assertSame(a, b)
    assertEquals(before + 1, MappedFiles.mapsCreated.get())
    var parses = 0
    def parse() = { parses += 1; new org.apache.parquet.hadoop.metadata.ParquetMetadata(null, java.util.List.of()) }
    val footer = a.footer(parse())
    assertSame(footer, b.footer(parse()))
    assertEquals(1, parses)
  }

  @Test def aFileWrittenAgainUnderItsNameIsMappedAgain(): Unit = {
    val f = temp("b.parquet", "first".getBytes("UTF-8"))
    assertEquals("first", content(MappedFiles(f).get))
    // same size, new content and time (a rewrite in place); then a new file renamed over it
    Files.write(f, "secnd".getBytes("UTF-8"))
    Files.setLastModifiedTime(f, FileTime.fromMillis(Files.getLastModifiedTime(f).toMillis + 5000))
    assertEquals("secnd", content(MappedFiles(f).get))
    val other = f.resolveSibling("b.tmp")
    Files.write(other, "third!".getBytes("UTF-8"))
    Files.move(other, f, java.nio.file.StandardCopyOption.REPLACE_EXISTING, java.nio.file.StandardCopyOption.ATOMIC_MOVE)
    assertEquals("third!", content(MappedFiles(f).get))
  }

  @Test def atMostMaxFilesStayMapped(): Unit = {
    val files = (0 to MappedFiles.MaxFiles).map(i => temp(s"c$i.parquet", s"file $i".getBytes("UTF-8")))
    val first = MappedFiles(files.head).get
    files.tail.foreach(f => MappedFiles(f).get)
    val again = MappedFiles(files.head).get
    assertNotSame(first, again) // evicted (least recently used), mapped anew
    assertEquals("file 0", content(again))
    assertSame(again, MappedFiles(files.head).get)
  }
}
