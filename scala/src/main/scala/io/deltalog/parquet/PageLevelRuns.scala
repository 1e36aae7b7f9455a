package io.deltalog.parquet

import java.nio.ByteOrder

import org.apache.parquet.bytes.{ByteBufferInputStream, BytesUtils}
import org.apache.parquet.column.{ColumnDescriptor, Encoding, ValuesType}
import org.apache.parquet.column.page.{DataPage, DataPageV1, DataPageV2}

/**
 * The definition levels of one data page of a non-repeated leaf as runs ([[HybridRle.foreachRun]]):
 * a column that is null in all but a few of a page's tens of thousands of slots is one or two
 * long runs, never expanded slot by slot. Slot indexes start at 0 in the page. Levels in the old
 * `BIT_PACKED` encoding of V1 pages go through parquet-mr's reader, one slot per run.
 */
private[deltalog] object PageLevelRuns {
  def definitionLevels(page: DataPage, desc: ColumnDescriptor, v: HybridRle.RunVisitor): Unit = {
    require(desc.getMaxRepetitionLevel == 0, s"$desc is repeated")
    val maxDl = desc.getMaxDefinitionLevel
    val n = page.getValueCount
    val width = BytesUtils.getWidthFromMaxInt(maxDl)
    if (maxDl == 0) { if (n > 0) v.run(0, n, 0); return }
    page match {
      case p: DataPageV1 if p.getDlEncoding == Encoding.RLE =>
        val bytes = p.getBytes.toByteBuffer.order(ByteOrder.LITTLE_ENDIAN)
        val pos = bytes.position()
        if (pos + 4 > bytes.limit()) throw new IllegalStateException(s"page ends before its definition levels in $desc")
        val len = bytes.getInt(pos)
        if (len < 0 || pos + 4L + len > bytes.limit()) throw new IllegalStateException(s"bad definition level length in $desc")
        HybridRle.foreachRun(bytes, pos + 4, pos + 4 + len, width, n, v)
      case p: DataPageV1 =>
        val r = p.getDlEncoding.getValuesReader(desc, ValuesType.DEFINITION_LEVEL)
        r.initFromPage(n, ByteBufferInputStream.wrap(p.getBytes.toByteBuffer))
        var i = 0
        while (i < n && v.run(i, 1, r.readInteger())) i += 1
      case p: DataPageV2 =>
        val b = p.getDefinitionLevels.toByteBuffer
        HybridRle.foreachRun(b, b.position(), b.limit(), width, n, v)
    }
  }
}
