package io.deltalog.tools

import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration

import io.deltalog.actions.{AddFile, Metadata}
import io.deltalog.exceptions.DeltalogException
import io.deltalog.log.DeltaLog
import io.deltalog.txn.{Operation, OptimisticTransaction}

/**
 * Command-line driver for multi-process transaction tests (no SparkSession needed):
 *
 * {{{
 * java -cp <deltalog jar>:<pyspark jars>/'*' io.deltalog.tools.TxnStress create <table>
 * ... TxnStress append <table> <n> <writerId>   # n blind appends of w<id>-<i>.parquet; "committed <v>" each
 * ... TxnStress delete <table> <path>           # remove <path> after filterFiles(); prints the outcome
 * }}}
 *
 * `create` fails (DELTA_TABLE_ALREADY_EXISTS) when the table exists; concurrent creates of a
 * new table: one wins, the others fail with DELTA_PROTOCOL_CHANGED.
 *
 * Exit code 0 on success, 1 on a failure (the error class / message is printed to stderr for
 * append and create; delete prints "conflict <errorClass>" or "not found <path>" on stdout), 2 on
 * bad usage.
 */
object TxnStress {
  val Schema: String =
    """{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]}"""

  def main(args: Array[String]): Unit = sys.exit(run(args.toIndexedSeq, System.out, System.err))

  /** Runs one command; returns the exit code. */
  def run(args: Seq[String], out: java.io.PrintStream, err: java.io.PrintStream): Int = {
    val conf = new Configuration()
    try args match {
      case Seq("create", table) =>
        val txn = OptimisticTransaction.start(DeltaLog.uncached(table, conf))
        if (txn.readVersion >= 0) {
          throw new DeltalogException("DELTA_TABLE_ALREADY_EXISTS",
            s"Table $table already exists (version ${txn.readVersion}).")
        }
        txn.updateMetadataForNewTable(Metadata(schemaString = Schema))
        val v = txn.commit(Nil, Operation.createTable())
        out.println(s"committed $v")
        0
      case Seq("append", table, n, writerId) =>
        val dl = DeltaLog.uncached(table, conf)
        (0 until n.toInt).foreach { i =>
          val txn = OptimisticTransaction.start(dl)
          val add = AddFile(path = s"w$writerId-$i.parquet", size = 100L + i, modificationTime = System.currentTimeMillis(),
            stats = Some("""{"numRecords":1}"""))
          val v = txn.commit(Seq(add), Operation.write().withMetrics(Map("numFiles" -> "1", "numOutputRows" -> "1")))
          out.println(s"committed $v")
          out.flush()
        }
        0
      case Seq("delete", table, path) =>
        val txn = OptimisticTransaction.start(DeltaLog.uncached(table, conf))
        txn.filterFiles().find(_.path == path) match {
          case None =>
            out.println(s"not found $path")
            1
          case Some(f) =>
            try {
              val v = txn.commit(Seq(f.remove(System.currentTimeMillis())), Operation.delete())
              out.println(s"committed $v")
              0
            } catch {
              case e: DeltalogException =>
                out.println(s"conflict ${e.errorClass}")
                1
            }
        }
      case _ =>
        err.println("usage: TxnStress create <table> | append <table> <n> <writerId> | delete <table> <path>")
        2
    } catch {
      case e: DeltalogException =>
        err.println(s"error ${e.errorClass}: ${e.getMessage}")
        1
      case NonFatal(e) =>
        err.println(s"error ${e.getClass.getName}: ${e.getMessage}")
        1
    }
  }
}
