package io.deltalog.parquet

import java.util.concurrent.{Callable, CompletableFuture, ConcurrentLinkedQueue, ExecutorService, Future}

import org.xerial.snappy.Snappy

/** A snappy-compressed page: bytes `[0, length)` of `bytes`; `rawLength` bytes before compression. */
private[deltalog] final class CompressedPage(val bytes: Array[Byte], val length: Int, val rawLength: Int)

/**
 * Compresses Parquet pages with snappy (raw block format, Parquet's SNAPPY codec), on
 * `executor` (the checkpoint writer passes its background threads, null on a single-core
 * machine: then on the calling thread), so that a file's pages are compressed while the next
 * ones are encoded. Page buffers are recycled: value buffers handed to
 * [[submit]] come back to [[valuesBuffer]] once compressed, compressed buffers once
 * [[release]]d. One instance per file writer.
 */
private[deltalog] final class PageCompressor(bufferSize: Int, executor: ExecutorService) {
  private val values = new ConcurrentLinkedQueue[Array[Byte]]()
  private val packed = new ConcurrentLinkedQueue[Array[Byte]]()

  /** A buffer of at least `bufferSize` bytes (reused when one was returned). */
  def valuesBuffer(): Array[Byte] = {
    val b = values.poll()
    if (b != null) b else new Array[Byte](bufferSize)
  }

  private def packedBuffer(n: Int): Array[Byte] = {
    var b = packed.poll()
    while (b != null && b.length < n) b = packed.poll() // too small: dropped
    if (b != null) b else new Array[Byte](math.max(n, Snappy.maxCompressedLength(bufferSize)))
  }

  /** Compresses `[from, until)` of `body` now; `body` is recycled when it is a values buffer. */
  def compress(body: Array[Byte], from: Int, until: Int): CompressedPage = {
    val len = until - from
    val out = packedBuffer(Snappy.maxCompressedLength(len))
    val n = Snappy.compress(body, from, len, out, 0)
    if (body.length >= bufferSize) values.offer(body)
    new CompressedPage(out, n, len)
  }

  /** Compresses in the background (small pages, or without spare cores: now). */
  def submit(body: Array[Byte], from: Int, until: Int): Future[CompressedPage] =
    if (executor == null || until - from < PageCompressor.InlineBelow) {
      CompletableFuture.completedFuture(compress(body, from, until))
    } else {
      executor.submit(new Callable[CompressedPage] { override def call(): CompressedPage = compress(body, from, until) })
    }

  /** Gives a written page's buffer back. */
  def release(page: CompressedPage): Unit = packed.offer(page.bytes)
}

private[deltalog] object PageCompressor {
  /** Pages smaller than this are compressed on the calling thread. */
  val InlineBelow: Int = 64 * 1024
}
