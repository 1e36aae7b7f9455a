package io.deltalog.log

import java.io.{BufferedReader, FileNotFoundException, InputStreamReader}
import java.nio.charset.StandardCharsets

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, Path}
import org.apache.parquet.HadoopReadOptions
import org.apache.parquet.column.{ColumnDescriptor, Encoding}
import org.apache.parquet.column.page.{DataPage, DataPageV1, DictionaryPage, PageReadStore, PageReader}
import org.apache.parquet.filter2.compat.FilterCompat
import org.apache.parquet.hadoop.ParquetFileReader
import org.apache.parquet.hadoop.api.InitContext
import org.apache.parquet.hadoop.metadata.BlockMetaData
import org.apache.parquet.hadoop.util.HadoopInputFile
import org.apache.parquet.io.{ColumnIOFactory, InputFile, LocalInputFile, MessageColumnIO}
import org.apache.parquet.io.api.RecordMaterializer
import org.apache.parquet.schema.MessageType

import io.deltalog.actions._
import io.deltalog.exceptions.CorruptLogFileException
import io.deltalog.log.ParquetActionConverters.CheckpointReadSupport
import io.deltalog.protocol.Protocol

/**
 * Options of [[CheckpointReader.read]].
 *
 * @param skipStats               do not read `add.stats` / `add.stats_parsed` (stats stay None)
 * @param onlyProtocolAndMetadata read only the `protocol` and `metaData` columns and stop as soon
 *                                as both were seen (sidecars are not followed)
 * @param skipRemoves             do not read `remove` rows
 */
final case class CheckpointReadOptions(
    skipStats: Boolean = false,
    onlyProtocolAndMetadata: Boolean = false,
    skipRemoves: Boolean = false)

object CheckpointReadOptions {
  val default: CheckpointReadOptions = CheckpointReadOptions()
}

/**
 * Reads checkpoints: classic single files, multi-part sets, V2 top-level files (`.parquet` or
 * `.json`, UUID- or classic-named) and their sidecars under `_delta_log/_sidecars/`.
 *
 * Parquet is read with parquet-mr directly (no Spark job): the file schema is projected to the
 * wanted columns and rows are assembled by custom converters straight into action objects
 * ([[ParquetActionConverters]]). `partitionValues_parsed` is never read; when `stats` is absent
 * and `stats_parsed` present the stats JSON string is rebuilt from the struct.
 *
 * Every unreadable file (not Parquet, truncated, bad pages, a missing sidecar) is reported as a
 * [[CorruptLogFileException]] naming it. Exceptions thrown by the sink pass through unchanged.
 */
object CheckpointReader {

  /** Directory of V2 sidecars inside `_delta_log`. */
  val SidecarDirName: String = "_sidecars"

  /**
   * Pushes every action of `checkpoint` into `sink` with `version = checkpoint.version`: the rows
   * of each file in order, then (for a V2 checkpoint) the `add`/`remove` rows of each sidecar in
   * the order of the `sidecar` rows. The `checkpointMetadata` and `sidecar` actions themselves are
   * pushed too.
   */
  def read(
      conf: Configuration,
      checkpoint: CheckpointInstance,
      sink: ReplaySink,
      options: CheckpointReadOptions = CheckpointReadOptions.default): Unit = {
    val sidecars = Vector.newBuilder[SidecarFile]
    val collecting = new ReplaySink {
      override def accept(version: Long, action: Action): Unit = {
        action match {
          case s: SidecarFile => sidecars += s
          case _ =>
        }
        sink.accept(version, action)
      }
    }
    val topWant = CheckpointSchema.topLevelWant(options.skipStats, options.onlyProtocolAndMetadata, options.skipRemoves)
    if (options.onlyProtocolAndMetadata) {
      var protocol = false
      var metadata = false
      val pm = new ReplaySink {
        override def accept(version: Long, action: Action): Unit = {
          action match {
            case _: Protocol => protocol = true
            case _: Metadata => metadata = true
            case _ =>
          }
          sink.accept(version, action)
        }
      }
      val it = checkpoint.files.iterator
      while (it.hasNext && !(protocol && metadata)) {
        readFile(conf, it.next(), checkpoint.version, topWant, pm, () => protocol && metadata)
      }
      return
    }
    checkpoint.files.foreach(f => readFile(conf, f, checkpoint.version, topWant, collecting, () => false))
    val found = sidecars.result()
    if (found.nonEmpty) {
      val logPath = checkpoint.files.head.getPath.getParent
      val want = CheckpointSchema.sidecarWant(options.skipStats, options.skipRemoves)
      found.foreach { sc =>
        val path = sidecarPath(logPath, sc.path)
        val status =
          try path.getFileSystem(conf).getFileStatus(path)
          catch {
            case e: FileNotFoundException =>
              throw new CorruptLogFileException(path.toString,
                s"sidecar file referenced by checkpoint ${checkpoint.files.head.getPath} is missing", e)
          }
        readParquet(conf, status, checkpoint.version, want, sink, () => false)
      }
    }
  }

  /**
   * The protocol and metadata of a checkpoint, reading only those columns and stopping as soon
   * as both were found.
   */
  def readProtocolAndMetadata(conf: Configuration, checkpoint: CheckpointInstance): (Option[Protocol], Option[Metadata]) = {
    var protocol: Option[Protocol] = None
    var metadata: Option[Metadata] = None
    read(conf, checkpoint, new ReplaySink {
      override def accept(version: Long, action: Action): Unit = action match {
        case p: Protocol => protocol = Some(p)
        case m: Metadata => metadata = Some(m)
        case _ =>
      }
    }, CheckpointReadOptions(onlyProtocolAndMetadata = true))
    (protocol, metadata)
  }

  /**
   * Location of a sidecar named by a `sidecar.path`: a bare (URI-encoded) name or relative path
   * resolves under `<logPath>/_sidecars/`, an absolute URI is used as is.
   */
  def sidecarPath(logPath: Path, path: String): Path =
    if (PathCodec.isAbsolute(path)) new Path(new java.net.URI(path))
    else new Path(new Path(logPath, SidecarDirName), PathCodec.decodePath(path))

  private def readFile(
      conf: Configuration,
      file: FileStatus,
      version: Long,
      want: CheckpointSchema.Fields,
      sink: ReplaySink,
      done: () => Boolean): Unit = {
    val name = file.getPath.getName
    if (name.endsWith(".json")) readJson(conf, file, version, sink, done)
    else readParquet(conf, file, version, want, sink, done)
  }

  private def corrupt(file: Path, e: Throwable): CorruptLogFileException = e match {
    case c: CorruptLogFileException => c
    case _ =>
      val detail = e match {
        case _: FileNotFoundException => "the file does not exist"
        case _ => s"cannot read it as a checkpoint (${e.getClass.getSimpleName}: ${e.getMessage})"
      }
      new CorruptLogFileException(file.toString, detail, e)
  }

  private def readJson(conf: Configuration, file: FileStatus, version: Long, sink: ReplaySink, done: () => Boolean): Unit = {
    val path = file.getPath
    val in =
      try new BufferedReader(new InputStreamReader(path.getFileSystem(conf).open(path), StandardCharsets.UTF_8), 1 << 16)
      catch { case NonFatal(e) => throw corrupt(path, e) }
    try {
      var lineNo = 0
      var continue = true
      while (continue) {
        val line = try in.readLine() catch { case NonFatal(e) => throw corrupt(path, e) }
        if (line == null) continue = false
        else {
          lineNo += 1
          ActionCodec.parseLine(line, path.toString, lineNo).foreach { a => sink.accept(version, a) }
          if (done()) continue = false
        }
      }
    } finally in.close()
  }

  private def inputFile(conf: Configuration, file: FileStatus): InputFile = {
    val uri = file.getPath.toUri
    if (uri.getScheme == null || uri.getScheme == "file") new LocalInputFile(java.nio.file.Paths.get(uri.getPath))
    else HadoopInputFile.fromStatus(file, conf)
  }

  private def readParquet(
      conf: Configuration,
      file: FileStatus,
      version: Long,
      want: CheckpointSchema.Fields,
      sink: ReplaySink,
      done: () => Boolean): Unit = {
    val path = file.getPath
    val reader =
      try {
        val options = HadoopReadOptions.builder(conf)
          .useStatsFilter(false).useDictionaryFilter(false).useRecordFilter(false)
          .useColumnIndexFilter(false).useBloomFilter(false).usePageChecksumVerification(false)
          .build()
        ParquetFileReader.open(inputFile(conf, file), options)
      } catch { case NonFatal(e) => throw corrupt(path, e) }
    try {
      val fileSchema = reader.getFooter.getFileMetaData.getSchema
      val support = new CheckpointReadSupport(want)
      val requested =
        try support.init(new InitContext(conf, java.util.Collections.emptyMap(), fileSchema)).getRequestedSchema
        catch { case NonFatal(e) => throw corrupt(path, e) }
      if (requested.getFieldCount == 0) return
      // One reading plan per set of top-level columns actually present in a row group.
      val plans = scala.collection.mutable.HashMap.empty[Seq[String], (MessageType, RecordMaterializer[Action], MessageColumnIO)]
      def plan(fields: Seq[String]): (MessageType, RecordMaterializer[Action], MessageColumnIO) =
        plans.getOrElseUpdate(fields, try {
          val schema = new MessageType(requested.getName, fields.map(f => requested.getType(requested.getFieldIndex(f))): _*)
          val materializer = support.prepareForRead(conf, java.util.Collections.emptyMap(), fileSchema,
            new org.apache.parquet.hadoop.api.ReadSupport.ReadContext(schema))
          val columnIO = new ColumnIOFactory(reader.getFooter.getFileMetaData.getCreatedBy, false)
            .getColumnIO(schema, fileSchema, true)
          (schema, materializer, columnIO)
        } catch { case NonFatal(e) => throw corrupt(path, e) })
      val topFields = requested.getFields.asScala.map(_.getName).toSeq
      val pmOnly = !want.children.contains("add") && !want.children.contains("remove") &&
        want.children.contains("protocol")
      val blocks = reader.getRowGroups.asScala.toIndexedSeq
      var b = 0
      while (b < blocks.size && !done()) {
        val block = blocks(b)
        b += 1
        val present = topFields.filterNot(f => allNull(block, f))
        if ((pmOnly && noProtocolOrMetadata(block)) || present.isEmpty) {
          reader.skipNextRowGroup()
        } else {
          val (schema, materializer, columnIO) = plan(present)
          reader.setRequestedSchema(schema)
          // Only calls into parquet-mr are wrapped: exceptions from the sink pass unchanged.
          val pages = try reader.readNextRowGroup() catch { case NonFatal(e) => throw corrupt(path, e) }
          if (pages == null) throw corrupt(path, new IllegalStateException(s"row group $b is missing"))
          val rows = pages.getRowCount
          val rr = try columnIO.getRecordReader(new LevelFixingPageStore(pages), materializer, FilterCompat.NOOP)
            catch { case NonFatal(e) => throw corrupt(path, e) }
          var i = 0L
          while (i < rows) {
            val action = try rr.read() catch { case NonFatal(e) => throw corrupt(path, e) }
            if (action != null) {
              sink.accept(version, action)
              if (pmOnly && done()) i = rows
            }
            i += 1
          }
        }
      }
    } finally {
      try reader.close() catch { case NonFatal(_) => }
    }
  }

  /**
   * parquet-mr's V1 pages of columns without repetition (max repetition level 0) declare their
   * (empty) repetition levels as `BIT_PACKED`, which parquet-mr then decodes value by value with
   * a general bit-packing reader -- about a third of the read time of a checkpoint. For a max
   * level of 0 both encodings decode to all zeros from zero bytes, so such pages are handed to
   * the column readers as `RLE`, whose reader for level 0 is a constant. Same for definition
   * levels of required columns. The page data is untouched.
   */
  private final class LevelFixingPageStore(underlying: PageReadStore) extends PageReadStore {
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

  /**
   * True when the row group's column statistics prove that the top-level column `field` is null
   * in every row (every leaf chunk has a null count equal to its value count). Chunks without
   * statistics are never considered null.
   */
  private def allNull(block: BlockMetaData, field: String): Boolean = {
    val prefix = field + "."
    var leaves = 0
    val ok = block.getColumns.asScala.forall { c =>
      val p = c.getPath.toDotString
      if (p.startsWith(prefix) || p == field) {
        leaves += 1
        val st = c.getStatistics
        st != null && !st.isEmpty && st.isNumNullsSet && st.getNumNulls == c.getValueCount
      } else true
    }
    ok && leaves > 0
  }

  /** True when row-group statistics prove no row of the group has a protocol or a metaData. */
  private def noProtocolOrMetadata(block: BlockMetaData): Boolean = {
    val rows = block.getRowCount
    def allNull(path: String): Boolean = block.getColumns.asScala.find(_.getPath.toDotString == path) match {
      case Some(c) =>
        val st = c.getStatistics
        st != null && st.isNumNullsSet && st.getNumNulls == rows
      case None => true
    }
    allNull("protocol.minReaderVersion") && allNull("metaData.id")
  }

  /** The file schema of a Parquet checkpoint file (for tests and diagnostics). */
  private[log] def fileSchema(conf: Configuration, file: FileStatus): MessageType = {
    val r = ParquetFileReader.open(inputFile(conf, file))
    try r.getFooter.getFileMetaData.getSchema finally r.close()
  }
}
