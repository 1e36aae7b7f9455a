package io.deltalog.api

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.JsonNode
import com.fasterxml.jackson.databind.node.{JsonNodeFactory, ObjectNode}

import io.deltalog.actions.{Action, ActionCodec, Metadata}
import io.deltalog.exceptions.ActionParseException
import io.deltalog.expressions.{PredicateParseException, PredicateParser}
import io.deltalog.txn.{OptimisticTransaction, Operation}

/**
 * py4j entry points for transactions: strings and longs in, JSON strings out. Python's
 * `deltalog.txn.OptimisticTransaction` is the only intended caller. Tables are opened through
 * [[TableApi]]'s Configuration, so a transaction and a `DeltaTable` of the same path share one
 * cached `DeltaLog` (the commit's post-commit update is seen by the next `forPath`).
 */
object TxnApi {

  /**
   * A transaction on the latest version of the existing table at `path`.
   *
   * @throws io.deltalog.exceptions.TableNotFoundException when there is no table
   */
  def start(path: String): TxnHandle = {
    val log = TableApi.deltaLog(path)
    new TxnHandle(new OptimisticTransaction(log, log.update()))
  }

  /** A transaction on `path` whether or not a table exists there (read version -1 if it does not). */
  def startNew(path: String): TxnHandle = new TxnHandle(OptimisticTransaction.start(TableApi.deltaLog(path)))

  /** Wraps a transaction built on the JVM side (tests, tools). */
  def wrap(txn: OptimisticTransaction): TxnHandle = new TxnHandle(txn)

  /** `{"k": "v", ...}` → map; non-string values keep their JSON text (delta-spark's convention). */
  private[api] def stringMap(json: String, what: String): Map[String, String] = {
    if (json == null || json.trim.isEmpty) return Map.empty
    val node = parseJson(json, what)
    if (node.isNull) return Map.empty
    if (!node.isObject) throw new IllegalArgumentException(s"$what must be a JSON object, got: $json")
    node.properties().asScala.map { e =>
      val v = e.getValue
      e.getKey -> (if (v.isNull) null else if (v.isTextual) v.textValue() else Action.mapper.writeValueAsString(v))
    }.toMap
  }

  private[api] def parseJson(json: String, what: String): JsonNode =
    try Action.mapper.readTree(json)
    catch {
      case e: com.fasterxml.jackson.core.JsonProcessingException =>
        throw new IllegalArgumentException(s"$what is not valid JSON: ${e.getOriginalMessage}", e)
    }
}

/** One open transaction as seen from Python (one thread at a time). */
class TxnHandle(val txn: OptimisticTransaction) {
  import TxnApi._

  def readVersion: Long = txn.readVersion
  def txnId: String = txn.txnId
  def committed: Boolean = txn.committed
  def commitVersion: Long = txn.commitVersion
  def tablePath: String = txn.deltaLog.tablePath.toString

  def metadataJson: String = Action.mapper.writeValueAsString(txn.metadata.toJsonNode)
  def protocolJson: String = Action.mapper.writeValueAsString(txn.protocol.toJsonNode)

  /** `metadataBodyJson` is the body of a `metaData` action (without the `{"metaData": ...}` wrapper). */
  def updateMetadata(metadataBodyJson: String): Unit = txn.updateMetadata(parseMetadata(metadataBodyJson))

  /** [[updateMetadata]] for CREATE / REPLACE (protocol computed as for a new table). */
  def updateMetadataForNewTable(metadataBodyJson: String): Unit =
    txn.updateMetadataForNewTable(parseMetadata(metadataBodyJson))

  /**
   * Live files matching the predicates (a JSON array of SQL strings, e.g. `["p = 'a'"]`), as a JSON
   * array of `add` bodies. An empty array reads every file without marking the whole table read
   * (delta-spark's `filterFiles(Nil)`); see [[filterAllFiles]].
   */
  def filterFiles(predicatesJson: String): String = {
    val node = parseJson(Option(predicatesJson).getOrElse("[]"), "predicates")
    if (!node.isArray) throw new IllegalArgumentException(s"predicates must be a JSON array of strings, got: $predicatesJson")
    val preds = node.elements().asScala.map { n =>
      if (!n.isTextual) throw new PredicateParseException(n.toString, 0, "a predicate must be a SQL string")
      PredicateParser.parse(n.textValue())
    }.toVector
    addsJson(txn.filterFiles(preds))
  }

  /** Every live file; the transaction depends on the whole table. */
  def filterAllFiles(): String = addsJson(txn.filterFiles())

  def readWholeTable(): Unit = txn.readWholeTable()

  def txnVersion(appId: String): Long = txn.txnVersion(appId)

  /**
   * Commits newline-delimited JSON actions (as in a log file) as operation `operationName`;
   * returns the committed version.
   *
   * @param operationParametersJson a JSON object; string values are written as they are, others as JSON text
   * @param userMetadata            `commitInfo.userMetadata`, or null
   */
  def commit(actionsNdjson: String, operationName: String, operationParametersJson: String,
      userMetadata: String): Long = {
    val actions = ActionCodec.parseText(Option(actionsNdjson).getOrElse(""), "<commit actions>")
    val op = Operation(Option(operationName).filter(_.nonEmpty).getOrElse("MANUAL UPDATE"),
      parameters = stringMap(operationParametersJson, "operationParameters"),
      userMetadata = Option(userMetadata))
    txn.commit(actions, op)
  }

  private def parseMetadata(body: String): Metadata = {
    val line = JsonNodeFactory.instance.objectNode()
    line.set[JsonNode](Metadata.ActionName, parseJson(body, "metadata"))
    ActionCodec.parseLine(Action.mapper.writeValueAsString(line), "<metadata>") match {
      case Some(m: Metadata) => m
      case other => throw new ActionParseException("<metadata>", 1, "metaData", s"expected a metaData action, got $other")
    }
  }

  private def addsJson(files: Seq[io.deltalog.actions.AddFile]): String = {
    val arr = JsonNodeFactory.instance.arrayNode()
    files.foreach(f => arr.add(f.toJsonNode: ObjectNode))
    Action.mapper.writeValueAsString(arr)
  }

  override def toString: String = s"TxnHandle($txn)"
}

/**
 * Command-line helper for the integration tests and `benchmarks/txn_bench.py` (no SparkSession,
 * nothing bound to the network):
 *
 * {{{
 * java -cp <deltalog jar>:<pyspark jars>/'*' io.deltalog.api.TxnTool read <table>
 *     # one JSON line: {"version":v,"numFiles":n,"paths":[...sorted],"checkpointVersion":c|null,
 *     #                 "setTransactions":{appId: version}} — a fresh, uncached DeltaLog
 * ... TxnTool append-bench <table> <n> <writerId> [<startFile>]
 *     # warms up, prints "ready", waits until <startFile> exists (when given), then commits n blind
 *     # appends exactly like TxnStress (w<id>-<i>.parquet) and prints "committed <v> <latencyMicros> <readVersion>"
 *     # per commit; a failed commit prints "failed <errorClass>" and the loop goes on; at the end
 *     # "cpu <micros>": the process CPU time used by the measured commits
 * ... TxnTool race <table> <goFile> <kind> <path>
 *     # starts a transaction, prints "started <readVersion>", waits until <goFile> exists, then commits:
 *     #   delete       filterFiles() (whole table read) and remove <path>
 *     #   blind-delete remove <path> without reading anything
 *     #   read-append  filterFiles() (whole table read) and add <path>
 *     # prints "committed <v>" (exit 0), "conflict <errorClass> <winningVersion>" (exit 3) or "not found <path>" (exit 4)
 * }}}
 *
 * Exit code 0 on success, 1 on an error (printed to stderr as "error <errorClass>: <message>"), 2 on bad usage.
 */
object TxnTool {
  import org.apache.hadoop.conf.Configuration

  import io.deltalog.actions.AddFile
  import io.deltalog.exceptions.DeltalogException
  import io.deltalog.log.DeltaLog

  def main(args: Array[String]): Unit = sys.exit(run(args.toIndexedSeq, System.out, System.err))

  def run(args: Seq[String], out: java.io.PrintStream, err: java.io.PrintStream): Int = {
    val conf = new Configuration()
    try args match {
      case Seq("read", table) =>
        out.println(readJson(DeltaLog.uncached(table, conf)))
        out.flush()
        0
      case Seq("append-bench", table, n, writerId, rest @ _*) if rest.size <= 1 =>
        appendBench(DeltaLog.uncached(table, conf), n.toInt, writerId, rest.headOption, out)
      case Seq("race", table, goFile, kind, path) if Set("delete", "blind-delete", "read-append").contains(kind) =>
        race(DeltaLog.uncached(table, conf), goFile, kind, path, out)
      case _ =>
        err.println("usage: TxnTool read <table> | append-bench <table> <n> <writerId> [<startFile>] | " +
          "race <table> <goFile> delete|blind-delete|read-append <path>")
        2
    } catch {
      case e: DeltalogException =>
        err.println(s"error ${e.errorClass}: ${e.getMessage}")
        1
      case scala.util.control.NonFatal(e) =>
        err.println(s"error ${e.getClass.getName}: ${e.getMessage}")
        1
    }
  }

  /** Summary of the latest snapshot as one JSON object. */
  def readJson(dl: DeltaLog): String = {
    val s = dl.update()
    val f = JsonNodeFactory.instance
    val o = f.objectNode()
    o.put("version", s.version)
    o.put("numFiles", s.numFiles)
    val paths = f.arrayNode()
    s.allFiles.map(_.path).toVector.sorted.foreach(p => paths.add(p))
    o.set[JsonNode]("paths", paths)
    s.logSegment.checkpointVersion match {
      case Some(c) => o.put("checkpointVersion", c)
      case None => o.putNull("checkpointVersion")
    }
    val txns = f.objectNode()
    s.setTransactions.foreach(t => txns.put(t.appId, t.version))
    o.set[JsonNode]("setTransactions", txns)
    o.put("metadataId", s.metadata.id)
    Action.mapper.writeValueAsString(o)
  }

  private def race(dl: DeltaLog, goFile: String, kind: String, path: String, out: java.io.PrintStream): Int = {
    val txn = OptimisticTransaction.start(dl)
    val now = System.currentTimeMillis()
    val actions: Seq[Action] = kind match {
      case "delete" =>
        txn.filterFiles().find(_.path == path) match {
          case Some(f) => Seq(f.remove(now))
          case None =>
            out.println(s"not found $path")
            out.flush()
            return 4
        }
      case "blind-delete" => Seq(io.deltalog.actions.RemoveFile(path, deletionTimestamp = Some(now)))
      case _ =>
        txn.filterFiles()
        Seq(AddFile(path = path, size = 1L, modificationTime = now, stats = Some("""{"numRecords":1}""")))
    }
    out.println(s"started ${txn.readVersion}")
    out.flush()
    val go = java.nio.file.Paths.get(goFile)
    while (!java.nio.file.Files.exists(go)) Thread.sleep(1)
    try {
      val v = txn.commit(actions, if (kind == "read-append") Operation.write() else Operation.delete())
      out.println(s"committed $v")
      out.flush()
      0
    } catch {
      case e: io.deltalog.exceptions.DeltaConcurrentModificationException =>
        out.println(s"conflict ${e.errorClass} ${e.winningVersion}")
        out.flush()
        3
    }
  }

  private def appendBench(dl: DeltaLog, n: Int, writerId: String, startFile: Option[String],
      out: java.io.PrintStream): Int = {
    // Warm-up (not timed): load the classes a commit needs; with -Ddeltalog.bench.warmup=N also run N
    // commits (checkpoint every 10) on a scratch table in a temp directory, so the JIT has compiled
    // the commit path before the measured commits start. Nothing is written to `dl`'s table.
    val warm = OptimisticTransaction.start(dl)
    warm.readVersion
    ActionCodec.serialize(Seq(AddFile(path = "warm-up", size = 1L, modificationTime = 0L)))
    val warmups = Option(System.getProperty("deltalog.bench.warmup")).flatMap(_.toIntOption).getOrElse(0)
    if (warmups > 0) {
      ScratchDir.using("deltalog-warmup-") { dir =>
        val scratch = DeltaLog.uncached(dir.toUri.toString, dl.hadoopConf)
        val create = OptimisticTransaction.start(scratch)
        create.updateMetadataForNewTable(Metadata(schemaString = io.deltalog.tools.TxnStress.Schema,
          configuration = Map("delta.checkpointInterval" -> "10")))
        create.commit(Nil, Operation.createTable())
        (0 until warmups).foreach { i =>
          val t = OptimisticTransaction.start(scratch)
          t.commit(Seq(AddFile(path = s"warm-$i.parquet", size = 1L, modificationTime = System.currentTimeMillis(),
            stats = Some("""{"numRecords":1}"""))), Operation.write())
        }
      }
    }
    out.println("ready")
    out.flush()
    startFile.foreach { sf =>
      val p = java.nio.file.Paths.get(sf)
      while (!java.nio.file.Files.exists(p)) Thread.sleep(1)
    }
    val os = java.lang.management.ManagementFactory.getOperatingSystemMXBean
    def cpuNanos: Long = os match {
      case b: com.sun.management.OperatingSystemMXBean => b.getProcessCpuTime
      case _ => -1L
    }
    val cpuAtStart = cpuNanos
    var failures = 0
    (0 until n).foreach { i =>
      val t0 = System.nanoTime()
      try {
        val txn = OptimisticTransaction.start(dl)
        val add = AddFile(path = s"w$writerId-$i.parquet", size = 100L + i, modificationTime = System.currentTimeMillis(),
          stats = Some("""{"numRecords":1}"""))
        val v = txn.commit(Seq(add), Operation.write().withMetrics(Map("numFiles" -> "1", "numOutputRows" -> "1")))
        val us = (System.nanoTime() - t0) / 1000L
        out.println(s"committed $v $us ${txn.readVersion}")
      } catch {
        case e: io.deltalog.exceptions.DeltalogException =>
          failures += 1
          out.println(s"failed ${e.errorClass}")
      }
      out.flush()
    }
    // CPU the whole process used for the measured commits (JIT and GC threads included).
    out.println(s"cpu ${(cpuNanos - cpuAtStart) / 1000L}")
    out.flush()
    if (failures == 0) 0 else 1
  }
}
