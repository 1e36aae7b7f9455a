package io.deltalog.log

import java.net.URI
import java.nio.file.Files

import scala.jdk.CollectionConverters._

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{Path, RawLocalFileSystem}
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import io.deltalog.ConformanceCorpus
import io.deltalog.actions.Action
import io.deltalog.exceptions.DeltalogException
import io.deltalog.txn.{Operation, OptimisticTransaction, TxnTestSupport}

/**
 * The local disk under the scheme `dltest:`, so that every log access takes the general Hadoop
 * `FileSystem` code (listStatus, open, create, rename; Parquet through Hadoop streams) instead of
 * deltalog's `file:` fast paths (directory names without stat, memory-mapped checkpoints, hard
 * links for put-if-absent), as on HDFS or any other Hadoop store. Like HDFS, a rename never
 * replaces an existing file.
 */
class GenericTestFileSystem extends RawLocalFileSystem {
  override def getUri: URI = GenericTestFileSystem.Uri
  override def getScheme: String = GenericTestFileSystem.Scheme

  /** As on HDFS: atomic, and false (nothing moved) when `dst` exists, also under concurrency. */
  override def rename(src: Path, dst: Path): Boolean = {
    val from = pathToFile(src).toPath
    val to = pathToFile(dst).toPath
    if (Files.isDirectory(from)) return !Files.exists(to) && super.rename(src, dst)
    try { Files.createLink(to, from); Files.delete(from); true }
    catch { case _: java.nio.file.FileAlreadyExistsException | _: java.nio.file.NoSuchFileException => false }
  }
}

object GenericTestFileSystem {
  val Scheme = "dltest"
  val Uri: URI = URI.create(s"$Scheme:///")

  /** Maps `dltest:` to this file system in `c`. */
  def register(c: Configuration): Unit = {
    c.set(s"fs.$Scheme.impl", classOf[GenericTestFileSystem].getName)
    c.setBoolean(s"fs.$Scheme.impl.disable.cache", true)
  }

  /** A configuration with `dltest:` registered and commits allowed on it. */
  def conf(): Configuration = {
    val c = new Configuration()
    register(c)
    // dltest: is not among the schemes deltalog trusts for put-if-absent; its renames are atomic here
    c.setBoolean(LogStore.AllowUnsafeKey, true)
    c
  }

  def uri(local: java.nio.file.Path): String = s"$Scheme://${local.toAbsolutePath}"
}

/** Reads and writes through a general Hadoop file system, against the `file:` paths as the oracle. */
class GenericFileSystemSuite {
  import TxnTestSupport._

  private val generic = GenericTestFileSystem.conf()
  private val local = new Configuration()

  /** What a reader sees of a snapshot: version, protocol, metadata, live files and tombstones. */
  private def view(s: Snapshot): (Long, String, String, Seq[String], Seq[String]) =
    (s.version, s.protocol.json, s.metadata.json,
      s.allFiles.map(a => s"${a.path} ${a.size} ${a.partitionValues} ${a.stats.orNull} ${a.deletionVector}").toSeq.sorted,
      s.tombstones.map(_.path).toSeq.sorted)

  @Test def corpusReadsTheSameThroughAGenericFileSystem(): Unit = {
    val root = ConformanceCorpus.root
    val failures = Vector.newBuilder[String]
    var compared = 0
    ConformanceCorpus.manifest.foreach { e =>
      val table = root.resolve(e.get("table_path").asText())
      def open(path: String, conf: Configuration) =
        try Right(view(DeltaLog.uncached(path, conf).snapshot())) catch { case ex: Throwable => Left(ex) }
      val viaFile = open(table.toString, local)
      val viaGeneric = open(GenericTestFileSystem.uri(table), generic)
      // A remove naming `file:/x` cancels an add of the scheme-less absolute path `/x` only where the
      // table's file system qualifies `/x` as `file:/x` (delta-spark canonicalises with the table's
      // file system too): on dltest: the add stays. Everything else must be identical.
      val schemeSpecific = e.get("exercises").elements().asScala.exists(_.asText() == "path-canonicalization")
      def withoutSchemeLess(v: (Long, String, String, Seq[String], Seq[String])) =
        if (schemeSpecific) v.copy(_4 = v._4.filterNot(_.startsWith("/"))) else v
      (viaFile, viaGeneric) match {
        case (Right(a), Right(b)) =>
          if (a != withoutSchemeLess(b) || (schemeSpecific && !b._4.exists(_.startsWith("/")))) {
            failures += s"${e.get("id").asText()}: $a\n  vs $b"
          } else compared += 1
        case (Left(a: DeltalogException), Left(b: DeltalogException)) =>
          if (a.errorClass != b.errorClass) failures += s"${e.get("id").asText()}: ${a.errorClass} vs ${b.errorClass}"
        case (a, b) => failures += s"${e.get("id").asText()}: file: gave $a, dltest: gave $b"
      }
    }
    val f = failures.result()
    assertTrue(f.isEmpty, s"${f.size} tables differ:\n${f.take(5).mkString("\n")}")
    assertTrue(compared > 150, s"only $compared tables loaded")
  }

  @Test def writesCommitsAndCheckpointsThroughAGenericFileSystem(): Unit = withDir { d =>
    for (policy <- Seq("classic", "v2")) {
      val dir = d.resolve(policy)
      val dl = DeltaLog.uncached(GenericTestFileSystem.uri(dir), generic)
      assertEquals(GenericTestFileSystem.Scheme, dl.tablePath.toUri.getScheme)
      create(dl, Seq("p"), Map("delta.checkpointPolicy" -> policy))
      (1 to 24).foreach { v =>
        val adds: Seq[Action] = (0 until 5).map(i => add(s"p=${v % 3}/f-$v-$i.parquet", Map("p" -> s"${v % 3}")))
        val removes = if (v % 4 == 0) dl.update().allFiles.take(3).map(_.remove(v.toLong)).toSeq else Nil
        commitNew(dl, adds ++ removes)
        if (v == 10) dl.checkpoint(dl.update(), Some(20L)) // multi-part where the policy allows it
      }
      dl.checkpoint()
      commitNew(dl, Seq(add("p=0/last.parquet", Map("p" -> "0"))))

      // A transaction that read an older version loses the version to a blind append and retries.
      val stale = OptimisticTransaction.start(dl)
      commitNew(dl, Seq(add("p=1/winner.parquet", Map("p" -> "1"))))
      assertEquals(27L, stale.commit(Seq(add("p=2/retried.parquet", Map("p" -> "2"))), Operation.write()))

      val logDir = dir.resolve("_delta_log")
      val names = Files.list(logDir).iterator().asScala.map(_.getFileName.toString).toSeq
      assertFalse(names.exists(n => n.startsWith(".") && !n.endsWith(".crc")), s"temp files left: $names")
      assertTrue(names.contains("_last_checkpoint"), names.toString)
      if (policy == "v2") assertTrue(names.exists(_.matches("""\d{20}\.checkpoint\.[0-9a-f-]{36}\.(json|parquet)""")), names.toString)
      else assertTrue(names.exists(_.matches("""00000000000000000010\.checkpoint\.0000000001\.\d{10}\.parquet""")), names.toString)

      // Every version reads the same through the generic store and through file: (fresh logs).
      val viaFile = DeltaLog.uncached(dir.toString, local)
      val viaGeneric = DeltaLog.uncached(GenericTestFileSystem.uri(dir), generic)
      assertEquals(27L, viaGeneric.update().version)
      for (v <- Seq(0L, 9L, 10L, 11L, 24L, 25L, 27L)) {
        assertEquals(view(viaFile.snapshotAt(v)), view(viaGeneric.snapshotAt(v)), s"$policy v$v")
      }
      val files = viaGeneric.update().allFiles.map(_.path).toSet
      assertTrue(files.contains("p=2/retried.parquet") && files.contains("p=1/winner.parquet"), policy)
      val ts = viaFile.update().timestamp
      assertEquals(view(viaFile.snapshotAtTimestamp(ts)), view(viaGeneric.snapshotAtTimestamp(ts)), policy)
    }
  }

  @Test def concurrentBlindAppendsLoseNothingThroughAGenericFileSystem(): Unit = withDir { d =>
    // Writers racing for each version through FileSystem.create + rename (no hard-link staging):
    // every append lands exactly once, at a distinct version.
    create(DeltaLog.uncached(GenericTestFileSystem.uri(d), generic))
    val writers = 4
    val perWriter = 15
    val pool = java.util.concurrent.Executors.newFixedThreadPool(writers)
    val start = new java.util.concurrent.CountDownLatch(1)
    val futures = (0 until writers).map { w =>
      pool.submit(new java.util.concurrent.Callable[Seq[Long]] {
        def call(): Seq[Long] = {
          val dl = DeltaLog.uncached(GenericTestFileSystem.uri(d), generic) // one log per writer, as in separate drivers
          start.await()
          (0 until perWriter).map(i => commitNew(dl, Seq(add(s"w$w-$i.parquet"))))
        }
      })
    }
    start.countDown()
    val versions = futures.flatMap(_.get(120, java.util.concurrent.TimeUnit.SECONDS))
    pool.shutdown()
    assertEquals((1L to writers * perWriter).toSet, versions.toSet, "each append at its own version")
    val s = DeltaLog.uncached(d.toString, local).update()
    assertEquals(writers.toLong * perWriter, s.version)
    assertEquals((for (w <- 0 until writers; i <- 0 until perWriter) yield s"w$w-$i.parquet").toSet,
      s.allFiles.map(_.path).toSet)
    // How many commits had to move past a version another writer took (diagnostic: contention happened).
    val reader = DeltaLog.uncached(d.toString, local)
    val rebased = (1L to s.version).count(v => commitInfoOf(reader, v).readVersion.exists(read => v - read > 1))
    println(s"generic-store concurrent appends: $rebased of ${s.version} commits moved past another writer's version")
    val leftovers = Files.list(d.resolve("_delta_log")).iterator().asScala.map(_.getFileName.toString)
      .filter(n => n.startsWith(".") && !n.endsWith(".crc")).toSeq
    assertEquals(Nil, leftovers, "no temp files left")
  }

  @Test def unknownStoresAreRefusedForWritesWithoutTheEscapeHatch(): Unit = withDir { d =>
    val conf = GenericTestFileSystem.conf()
    conf.setBoolean(LogStore.AllowUnsafeKey, false)
    val dl = DeltaLog.uncached(GenericTestFileSystem.uri(d), conf)
    val e = assertThrows(classOf[DeltalogException], () => create(dl))
    assertEquals("DELTA_UNSAFE_LOG_STORE", e.errorClass)
    assertFalse(Files.exists(d.resolve("_delta_log").resolve(f"${0}%020d.json")))
  }
}
