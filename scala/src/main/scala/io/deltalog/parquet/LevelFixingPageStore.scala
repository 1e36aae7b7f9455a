package io.deltalog.parquet

import org.apache.parquet.column.{ColumnDescriptor, Encoding}
import org.apache.parquet.column.page.{DataPage, DataPageV1, DictionaryPage, PageReadStore, PageReader}

/**
 * parquet-mr's V1 pages of columns without repetition (max repetition level 0) declare their
 * (empty) repetition levels as `BIT_PACKED`, which parquet-mr then decodes value by value with
 * a general bit-packing reader -- about a third of the read time of a checkpoint. For a max
 * level of 0 both encodings decode to all zeros from zero bytes, so such pages are handed to
 * the column readers as `RLE`, whose reader for level 0 is a constant. Same for definition
 * levels of required columns. The page data is untouched.
 */
private[deltalog] final class LevelFixingPageStore(underlying: PageReadStore) extends PageReadStore {
  override def getPageReader(d: ColumnDescriptor): PageReader = {
    val r = underlying.getPageReader(d)
    val fixRl = d.getMaxRepetitionLevel == 0
    val fixDl = d.getMaxDefinitionLevel == 0
    new PageReader {
      override def readDictionaryPage(): DictionaryPage = r.readDictionaryPage()
      override def getTotalValueCount: Long = r.getTotalValueCount
      override def readPage(): DataPage = r.readPage() match {
        case p: DataPageV1 if (fixRl && p.getRlEncoding == Encoding.BIT_PACKED) ||
          (fixDl && p.getDlEncoding == Encoding.BIT_PACKED) =>
          new DataPageV1(p.getBytes, p.getValueCount, p.getUncompressedSize, p.getStatistics,
            if (fixRl) Encoding.RLE else p.getRlEncoding, if (fixDl) Encoding.RLE else p.getDlEncoding,
            p.getValueEncoding)
        case other => other
      }
    }
  }
  override def getRowCount: Long = underlying.getRowCount
  override def getRowIndexOffset: java.util.Optional[java.lang.Long] = underlying.getRowIndexOffset
  override def getRowIndexes: java.util.Optional[java.util.PrimitiveIterator.OfLong] = underlying.getRowIndexes
  override def close(): Unit = underlying.close()
}
