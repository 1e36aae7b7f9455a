package io.deltalog.txn

import java.util.concurrent.{Callable, Executors, TimeUnit}

import scala.jdk.CollectionConverters._

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

class ConcurrentCommitsSuite {
  import TxnTestSupport._

  @Test def eightThreadsBlindAppend(): Unit = withDir { d =>
    val dl = newLog(d)
    create(dl)
    val threads = 8
    val perThread = 25
    val pool = Executors.newFixedThreadPool(threads)
    try {
      val tasks = (0 until threads).map { t =>
        new Callable[Seq[Long]] {
          def call(): Seq[Long] = (0 until perThread).map { i =>
            OptimisticTransaction.start(dl).commit(Seq(add(s"t$t-$i.parquet")), Operation.write())
          }
        }
      }
      val results = pool.invokeAll(tasks.asJava).asScala.flatMap(_.get(10, TimeUnit.MINUTES)).toSeq
      assertEquals((1L to 200L).toSet, results.toSet, "every commit got its own version")
    } finally pool.shutdownNow()
    val s = newLog(d).update()
    assertEquals(200L, s.version)
    val expected = (for (t <- 0 until threads; i <- 0 until perThread) yield s"t$t-$i.parquet").toSet
    assertEquals(expected, s.allFiles.map(_.path).toSet)
    assertEquals(200L, dl.update().version)
  }
}
