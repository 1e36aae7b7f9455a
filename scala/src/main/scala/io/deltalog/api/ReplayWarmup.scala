package io.deltalog.api

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Path => NioPath}

import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration

import io.deltalog.actions.{Action, ActionCodec, AddFile, Metadata, RemoveFile}
import io.deltalog.log.DeltaLog
import io.deltalog.protocol.Protocol

/**
 * Runs a driver's table-open code on a small table of its own before the first real open, so the
 * JIT has compiled it by then. In a fresh driver the first load of a table runs interpreted:
 * loading 100k files from a checkpoint to a pyarrow table took ~0.33 s there (classes preloaded)
 * against ~0.03 s once compiled; after this warm-up over 2 x 2,000 files, ~0.21 s.
 *
 * The table is written to a new temporary directory (commits, a checkpoint written by
 * deltalog's own writer, commits after it), opened [[Rounds]] times the way `TableApi` opens one
 * (listing, `_last_checkpoint`, checkpoint and commit replay, file count, the Arrow transfer of
 * the live files, the protocol-and-metadata path) and deleted again. It touches no user table,
 * no cache ([[DeltaLog.uncached]]) and no Spark session. Runs on [[ClassPreload]]'s thread after
 * the class list, which the session extension starts while the session is being created.
 *
 * It moves work, it does not remove it: on a 2-processor driver, where creating the session
 * already keeps both busy, session start grew by about what the first load saved (measured: start
 * +0.2-0.4 s, first 100k-file load 0.33 -> 0.21 s). So by default it runs only on drivers with
 * [[MinProcessors]] or more processors, where it uses one that is otherwise idle at that time.
 */
object ReplayWarmup {
  val CheckpointAdds: Int = 2000 // adds in the table's checkpoint
  val Rounds: Int = 2
  /** Fewer processors than this: `auto` does not warm up (see the class comment). */
  val MinProcessors: Int = 4

  /** What a run did: live files seen per round (tests check them against the table written). */
  final case class Outcome(table: String, expectedFiles: Long, filesPerRound: Seq[Long], millis: Long)

  /**
   * `-Ddeltalog.warmup=auto` (default): only with [[MinProcessors]] or more processors;
   * `true`: always; `false`: never.
   */
  def enabled: Boolean = enabled(System.getProperty("deltalog.warmup", "auto"),
    Runtime.getRuntime.availableProcessors())

  private[api] def enabled(setting: String, processors: Int): Boolean = setting.trim.toLowerCase match {
    case "true" => true
    case "false" => false
    case _ => processors >= MinProcessors
  }

  /** [[run]] when [[enabled]]: its outcome, else (or when it failed) why not. */
  def runIfEnabled(): Either[String, Outcome] =
    if (!enabled) Left(s"off (deltalog.warmup=${System.getProperty("deltalog.warmup", "auto")}, " +
      s"${Runtime.getRuntime.availableProcessors()} processors)")
    else try Right(run()) catch { case e @ (NonFatal(_) | _: LinkageError) => Left(e.toString) }

  /** Writes the table, opens it [[Rounds]] times, deletes it; throws what the engine throws. */
  def run(rounds: Int = Rounds, numFiles: Int = CheckpointAdds): Outcome = {
    val start = System.nanoTime()
    ScratchDir.using("deltalog-warmup-") { dir =>
      val conf = new Configuration()
      val expected = writeTable(dir, conf, numFiles)
      val transfer = dir.resolve("files.arrow").toString
      val seen = (1 to rounds).map { _ =>
        val log = DeltaLog.uncached(dir.toString, conf)
        val snapshot = log.update()
        val n = snapshot.numFiles
        // A new transfer file each round, as a driver's first transfer is (an existing one would
        // be written through a map kept for it, TransferMaps, of a file about to be deleted).
        Files.deleteIfExists(java.nio.file.Paths.get(transfer))
        if (!FilesTransfer.write(snapshot.state, transfer)) FilesArrow.addsFromStateToFile(snapshot.state, transfer)
        DeltaLog.uncached(dir.toString, conf).readProtocolAndMetadata()
        n
      }
      Outcome(dir.toString, expected, seen, (System.nanoTime() - start) / 1000000)
    }
  }

  /** Commits 0–2, a checkpoint at 2, commits 3–4; returns the live file count at 4. */
  private def writeTable(dir: NioPath, conf: Configuration, numFiles: Int): Long = {
    val log = dir.resolve("_delta_log")
    Files.createDirectories(log)
    def commit(version: Long, actions: Seq[Action]): Unit =
      Files.write(log.resolve(f"$version%020d.json"), ActionCodec.serialize(actions).getBytes(UTF_8))
    val schema = """{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},""" +
      """{"name":"name","type":"string","nullable":true,"metadata":{}}]}"""
    val perCommit = numFiles / 3
    commit(0, Seq(Protocol(1, 2), Metadata(id = "deltalog-warmup", schemaString = schema,
      createdTime = Some(1700000000000L))) ++ adds(0, perCommit))
    commit(1, adds(perCommit, 2 * perCommit))
    commit(2, adds(2 * perCommit, numFiles) ++ removes(0, 10))
    DeltaLog.uncached(dir.toString, conf).checkpoint()
    commit(3, adds(numFiles, numFiles + 100))
    commit(4, removes(10, 60))
    numFiles + 100 - 60
  }

  private def path(i: Int): String = f"part-$i%05d-6f1c2b3e-4d5a-4b6c-8d7e-9f0a1b2c3d4e.c000.snappy.parquet"

  private def adds(from: Int, until: Int): Seq[AddFile] = (from until until).map { i =>
    AddFile(path(i), Map.empty, 100000L + i, 1700000000000L + i, dataChange = true,
      stats = Some(s"""{"numRecords":${1000 + i % 97},"minValues":{"id":${i * 10L},"name":"a$i"},""" +
        s""""maxValues":{"id":${i * 10L + 9},"name":"z$i"},"nullCount":{"id":0,"name":${i % 3}}}"""))
  }

  private def removes(from: Int, until: Int): Seq[RemoveFile] = (from until until).map { i =>
    RemoveFile(path(i), deletionTimestamp = Some(1700000100000L), extendedFileMetadata = Some(true),
      partitionValues = Some(Map.empty), size = Some(100000L + i))
  }
}
