package io.deltalog.txn

import java.io.File
import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Path => NioPath}

import scala.jdk.CollectionConverters._

import org.apache.hadoop.conf.Configuration
import org.junit.jupiter.api.Assertions._

import io.deltalog.TestDirs
import io.deltalog.actions._
import io.deltalog.expressions.{Predicate, PredicateParser}
import io.deltalog.log.{DeltaLog, FileNames}

/** Helpers for the transaction suites: temp tables, schemas, fake data files. */
object TxnTestSupport {
  def newDir(): NioPath = TestDirs.create("deltalog-txn")

  def deleteRecursively(p: NioPath): Unit = TestDirs.deleteRecursively(p)

  def withDir[T](body: NioPath => T): T = {
    val d = newDir()
    try body(d) finally deleteRecursively(d)
  }

  def newLog(dir: NioPath, conf: Configuration = new Configuration()): DeltaLog = DeltaLog.uncached(dir.toString, conf)

  def schema(cols: (String, String)*): String =
    cols.map { case (n, t) => s"""{"name":"$n","type":"$t","nullable":true,"metadata":{}}""" }
      .mkString("""{"type":"struct","fields":[""", ",", "]}")

  val DefaultSchema: String = schema("id" -> "long", "p" -> "string")

  def metadata(partitionColumns: Seq[String] = Nil, conf: Map[String, String] = Map.empty,
      schemaString: String = DefaultSchema): Metadata =
    Metadata(schemaString = schemaString, partitionColumns = partitionColumns, configuration = conf)

  /** Creates the table (version 0). */
  def create(dl: DeltaLog, partitionColumns: Seq[String] = Nil, conf: Map[String, String] = Map.empty,
      schemaString: String = DefaultSchema): Long = {
    val txn = OptimisticTransaction.start(dl)
    txn.updateMetadata(metadata(partitionColumns, conf, schemaString))
    txn.commit(Nil, Operation.createTable(partitionColumns))
  }

  def add(path: String, partition: Map[String, String] = Map.empty, numRecords: Long = 1L,
      dataChange: Boolean = true): AddFile =
    AddFile(path = path, partitionValues = partition, size = 10L, modificationTime = 1L, dataChange = dataChange,
      stats = Some(s"""{"numRecords":$numRecords}"""))

  def p(sql: String): Predicate = PredicateParser.parse(sql)

  /** Commits `actions` in a fresh transaction. */
  def commitNew(dl: DeltaLog, actions: Seq[Action], op: Operation = Operation.write()): Long =
    OptimisticTransaction.start(dl).commit(actions, op)

  def commitFile(dl: DeltaLog, v: Long): File = new File(FileNames.deltaFile(dl.logPath, v).toUri)

  def readCommit(dl: DeltaLog, v: Long): Seq[Action] =
    ActionCodec.parseText(new String(Files.readAllBytes(commitFile(dl, v).toPath), StandardCharsets.UTF_8))

  def commitInfoOf(dl: DeltaLog, v: Long): CommitInfo = readCommit(dl, v).head.asInstanceOf[CommitInfo]

  /** Writes a commit file directly (a "foreign" writer). */
  def writeRaw(dl: DeltaLog, v: Long, actions: Seq[Action]): Unit = {
    val f = commitFile(dl, v)
    f.getParentFile.mkdirs()
    Files.write(f.toPath, ActionCodec.serialize(actions).getBytes(StandardCharsets.UTF_8))
  }

  def livePaths(dl: DeltaLog): Set[String] = dl.update().allFiles.map(_.path).toSet

  def assertThrowsWithClass[E <: Throwable](cls: Class[E], body: => Any): E =
    assertThrows(cls, () => { body; () })

  def javaList[T](s: Seq[T]): java.util.List[T] = s.asJava
}
