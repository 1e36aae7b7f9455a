package io.deltalog.api

import java.io.{BufferedReader, InputStreamReader}
import java.nio.charset.StandardCharsets
import java.util.concurrent.atomic.AtomicBoolean

import scala.util.control.NonFatal

/**
 * Loads, on a second thread, the classes the first table open of a driver needs (parquet-mr's
 * footer, format and encoding classes, the Jackson copy parquet-mr shades, deltalog's replay),
 * while the Spark session is being created. In a fresh driver much of the first open is class
 * loading: about 1,900 classes outside Spark, read from jars and verified one at a time by the
 * thread that first touches them. (deltalog is compiled with `-Ydelambdafy:inline`, so its
 * lambdas are such classes too, instead of being spun by `LambdaMetafactory` on the calling
 * thread at first use: ~180 of them in a first open.)
 *
 * Classes are loaded (`Class.forName(name, false, loader)`), then linked, i.e. verified
 * (`getDeclaredFields` links the class: fresh 100k-file load 0.37 -> 0.33 s), never
 * initialised here: static initialisers still run on the thread that first uses a class, so no
 * initialisation order changes and no class-initialisation lock is taken by two threads in
 * opposite orders. `-Ddeltalog.preload.link=false` skips the linking.
 * The names come from the resource [[ListResource]] (one binary class name per line, `#`
 * comments), written by `make preload-list` from a class-load log of a first open; a name that
 * no longer exists is skipped. Then the same thread runs [[ReplayWarmup]] (the JIT's share of a
 * first open). Runs at most once per JVM, started by the session extension when the session is
 * created (else by the first `TableApi` use); `-Ddeltalog.preload=false` disables both.
 */
object ClassPreload {
  val ListResource = "/io/deltalog/preload-classes.txt"

  private val started = new AtomicBoolean(false)
  @volatile private var loaded = 0
  @volatile private var missing = 0
  @volatile private var finished = false
  @volatile private var warmup: Either[String, ReplayWarmup.Outcome] = Left("not run")

  /** Starts the preload thread (once per JVM); false when it already ran or is disabled. */
  def start(): Boolean = {
    if (System.getProperty("deltalog.preload", "true") == "false") return false
    if (!started.compareAndSet(false, true)) return false
    val loader = Option(getClass.getClassLoader).getOrElse(ClassLoader.getSystemClassLoader)
    val t = new Thread(() => try run(loader) finally finished = true, "deltalog-class-preload")
    t.setDaemon(true)
    t.start()
    true
  }

  /** Classes loaded and names not found so far, and whether the thread is done (tests, diagnostics). */
  def status: String = s"loaded=$loaded missing=$missing finished=$finished warmup=$warmupStatus"

  /** The [[ReplayWarmup]] run after the class list: its outcome, or why it did not run/failed. */
  def warmupStatus: Either[String, ReplayWarmup.Outcome] = warmup

  def loadedCount: Int = loaded
  def missingCount: Int = missing
  def isFinished: Boolean = finished

  /** The class names of [[ListResource]] (empty when the resource is absent). */
  def listedNames: Seq[String] = {
    val in = getClass.getResourceAsStream(ListResource)
    if (in == null) return Nil
    val r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))
    try Iterator.continually(r.readLine()).takeWhile(_ != null).map(_.trim)
      .filter(n => n.nonEmpty && !n.startsWith("#")).toVector
    finally r.close()
  }

  private def run(loader: ClassLoader): Unit = {
    val classes = new java.util.ArrayList[Class[_]]()
    listedNames.foreach { name =>
      try { classes.add(Class.forName(name, false, loader)); loaded += 1 }
      catch {
        case _: ClassNotFoundException | _: LinkageError => missing += 1
        case NonFatal(_) => missing += 1
      }
    }
    if (System.getProperty("deltalog.preload.link", "true") != "false") classes.forEach { c =>
      try c.getDeclaredFields catch { case NonFatal(_) | _: LinkageError => () }
    }
    warmup = ReplayWarmup.runIfEnabled()
  }
}
