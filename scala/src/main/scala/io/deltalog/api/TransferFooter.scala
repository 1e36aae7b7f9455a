package io.deltalog.api

import java.nio.charset.StandardCharsets.UTF_8

/**
 * The JSON footer of a transfer file ([[FilesTransfer]]): `{"batches":[{"rows":n,"buffers":
 * {"name":[offset,length],...}},...]}`, written as text. Buffer names are fixed ASCII names, so
 * nothing needs escaping; Jackson's tree and serializer are left out because in a fresh driver
 * their first use was a measurable part of the first transfer.
 */
private[api] final class TransferFooter {
  private val json = new java.lang.StringBuilder("{\"batches\":[")
  private var batches = 0
  private var buffers = 0
  private var open = false

  def batchCount: Int = batches

  /** Starts the entry of a batch of `rows` rows. */
  def beginBatch(rows: Int): Unit = {
    if (open) throw new IllegalStateException("previous batch not ended")
    if (batches > 0) json.append(',')
    json.append("{\"rows\":").append(rows).append(",\"buffers\":{")
    batches += 1
    buffers = 0
    open = true
  }

  /** A buffer of the current batch: `length` bytes at file offset `offset`. */
  def buffer(name: String, offset: Long, length: Long): Unit = {
    if (!open) throw new IllegalStateException("no batch started")
    if (buffers > 0) json.append(',')
    json.append('"').append(name).append("\":[").append(offset).append(',').append(length).append(']')
    buffers += 1
  }

  def endBatch(): Unit = { json.append("}}"); open = false }

  /** The footer's UTF-8 bytes. */
  def bytes: Array[Byte] = {
    if (open) throw new IllegalStateException("batch not ended")
    (json.toString + "]}").getBytes(UTF_8)
  }
}
