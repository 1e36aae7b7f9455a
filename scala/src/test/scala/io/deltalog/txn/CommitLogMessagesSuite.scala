package io.deltalog.txn

import scala.collection.mutable

import org.apache.logging.log4j.{Level, LogManager}
import org.apache.logging.log4j.core.{LogEvent, LoggerContext}
import org.apache.logging.log4j.core.appender.AbstractAppender
import org.apache.logging.log4j.core.config.Property
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

/** The seed's log messages of the commit loop. */
class CommitLogMessagesSuite {
  import TxnTestSupport._

  private def capture[T](body: => T): Seq[(Level, String)] = {
    val events = mutable.ArrayBuffer.empty[(Level, String)]
    val appender = new AbstractAppender("txn-capture", null, null, true, Property.EMPTY_ARRAY) {
      override def append(e: LogEvent): Unit = events.synchronized {
        events += ((e.getLevel, e.getMessage.getFormattedMessage))
      }
    }
    appender.start()
    val ctx = LogManager.getContext(false).asInstanceOf[LoggerContext]
    val name = classOf[OptimisticTransaction].getName
    val cfg = ctx.getConfiguration
    val loggerConfig = new org.apache.logging.log4j.core.config.LoggerConfig(name, Level.DEBUG, true)
    loggerConfig.addAppender(appender, Level.DEBUG, null)
    cfg.addLogger(name, loggerConfig)
    ctx.updateLoggers()
    try body finally {
      cfg.removeLogger(name)
      ctx.updateLoggers()
      appender.stop()
    }
    events.synchronized(events.toSeq)
  }

  @Test def commitLoopMessages(): Unit = withDir { d =>
    val dl = newLog(d)
    create(dl)
    val (winner, loser) = (OptimisticTransaction.start(dl), OptimisticTransaction.start(dl))
    winner.commit(Seq(add("w")), Operation.write())
    val msgs = capture(loser.commit(Seq(add("l")), Operation.write())).map(_._2)
    assertTrue(msgs.exists(_.startsWith("Attempting to commit version 1 with 2 actions with Serializable isolation level")), msgs.toString)
    assertTrue(msgs.exists(m => m.startsWith("Completed checking for conflicts Version: 1 Attempt: 1 Time: ") && m.endsWith(" ms")), msgs.toString)
    assertTrue(msgs.contains("No logical conflicts with deltas [1, 2), retrying."), msgs.toString)
    assertTrue(msgs.contains(s"Committed delta #2 to ${dl.logPath}"), msgs.toString)
  }

  @Test def failedCheckpointIsLogged(): Unit = withDir { d =>
    val dl = newLog(d)
    create(dl, conf = Map("delta.checkpointInterval" -> "1"))
    val txn = OptimisticTransaction.start(dl)
    txn.checkpointer = (_, _) => throw new IllegalStateException("no")
    val events = capture(txn.commit(Seq(add("a")), Operation.write()))
    assertTrue(events.contains((Level.WARN, "Failed to checkpoint table state.")), events.toString)
  }
}
