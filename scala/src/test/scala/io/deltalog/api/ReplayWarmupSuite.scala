package io.deltalog.api

import java.nio.file.{Files, Paths}

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

class ReplayWarmupSuite {
  @Test def opensItsOwnTableAndDeletesIt(): Unit = {
    val out = ReplayWarmup.run(rounds = 2, numFiles = 300)
    // 300 adds, 10 removed before the checkpoint, 100 added and 50 more removed after it.
    assertEquals(340L, out.expectedFiles)
    assertEquals(Seq(340L, 340L), out.filesPerRound)
    assertFalse(Files.exists(Paths.get(out.table)), s"${out.table} left behind")
  }

  @Test def autoNeedsFourProcessors(): Unit = {
    assertFalse(ReplayWarmup.enabled("auto", 2))
    assertTrue(ReplayWarmup.enabled("auto", 4))
    assertTrue(ReplayWarmup.enabled("TRUE", 1))
    assertFalse(ReplayWarmup.enabled("false", 64))
    assertTrue(ReplayWarmup.enabled("", 8), "anything else means auto")
  }
}
