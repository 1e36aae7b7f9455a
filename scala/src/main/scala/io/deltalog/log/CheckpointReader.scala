package io.deltalog.log

import java.io.{BufferedReader, FileNotFoundException, InputStreamReader}
import java.nio.charset.StandardCharsets

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, Path}
import org.apache.parquet.HadoopReadOptions
import org.apache.parquet.column.page.PageReadStore
import org.apache.parquet.crypto.DecryptionPropertiesFactory
import org.apache.parquet.filter2.compat.FilterCompat
import org.apache.parquet.filter2.predicate.FilterApi
import org.apache.parquet.hadoop.ParquetFileReader
import org.apache.parquet.hadoop.api.InitContext
import org.apache.parquet.hadoop.metadata.BlockMetaData
import org.apache.parquet.hadoop.util.HadoopInputFile
import org.apache.parquet.internal.column.columnindex.OffsetIndex
import org.apache.parquet.internal.filter2.columnindex.RowRanges
import org.apache.parquet.io.{ColumnIOFactory, InputFile, MessageColumnIO}
import org.apache.parquet.io.api.{Binary, RecordMaterializer}
import org.apache.parquet.schema.{GroupType, MessageType, PrimitiveType}
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName

import io.deltalog.actions._
import io.deltalog.exceptions.{CorruptLogFileException, DeltalogException}
import io.deltalog.log.ParquetActionConverters.CheckpointReadSupport
import io.deltalog.parquet.{HybridRle, LevelFixingPageStore, MappedColumnChunk, MappedInputFile, PageLevelRuns, ParquetFooter,
  RowTrimmedPages}
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
    skipRemoves: Boolean = false,
    /** The caller knows the protocol and metadata: their rows are not read (Parquet files). */
    skipProtocolAndMetadata: Boolean = false,
    /** Read only the `sidecar` rows of the top-level files; the sidecars are not followed. */
    onlySidecars: Boolean = false,
    /** Read the sidecars a V2 top-level file names (false: a distributed reader reads them itself). */
    followSidecars: Boolean = true)

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
 * and `stats_parsed` present the stats JSON string is rebuilt from the struct. Two column-wise
 * paths skip the row assembly: plain `add` rows ([[PlainAddColumns]]) and, in a local file, the
 * protocol / metaData rows ([[ProtocolAndMetadataColumns]]: no page index, no filtered read).
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
      override def wantsPlainAdds: Boolean = sink.wantsPlainAdds
      override def acceptPlainAdd(version: Long, row: PlainAddRow): Unit = sink.acceptPlainAdd(version, row)
      override def detachedStats: DetachedStats = sink.detachedStats
      override def expectAddBytesPerRow(path: Int, stats: Int): Unit = sink.expectAddBytesPerRow(path, stats)
    }
    val topWant =
      if (options.onlySidecars) CheckpointSchema.sidecarRowsWant
      else CheckpointSchema.topLevelWant(options.skipStats, options.onlyProtocolAndMetadata, options.skipRemoves,
        options.skipProtocolAndMetadata)
    if (options.onlyProtocolAndMetadata) {
      val pm = new ProtocolAndMetadataSink(sink)
      val it = checkpoint.files.iterator
      while (it.hasNext && !pm.found) {
        readFile(conf, it.next(), checkpoint.version, topWant, pm, () => pm.found)
      }
      return
    }
    checkpoint.files.foreach(f => readFile(conf, f, checkpoint.version, topWant, collecting, () => false))
    val found = sidecars.result()
    if (found.nonEmpty && !options.onlySidecars && options.followSidecars) {
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
   * Pushes the `add`/`remove` rows of one V2 sidecar file (found through [[sidecarPath]]) into
   * `sink` with `version` (the checkpoint's), as [[read]] does when it follows the sidecars.
   */
  def readSidecar(conf: Configuration, sidecar: FileStatus, version: Long, sink: ReplaySink,
      options: CheckpointReadOptions = CheckpointReadOptions.default): Unit =
    readParquet(conf, sidecar, version, CheckpointSchema.sidecarWant(options.skipStats, options.skipRemoves), sink,
      () => false)

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

  /** The local file behind `file` (plain path or `file:` URI). */
  private def localPath(file: FileStatus): Option[java.nio.file.Path] = {
    val uri = file.getPath.toUri
    if (uri.getScheme == null || uri.getScheme == "file") Some(java.nio.file.Paths.get(uri.getPath)) else None
  }

  private def inputFile(conf: Configuration, file: FileStatus): InputFile = {
    val uri = file.getPath.toUri
    if (uri.getScheme == null || uri.getScheme == "file") MappedInputFile(java.nio.file.Paths.get(uri.getPath))
    else HadoopInputFile.fromStatus(file, conf)
  }

  /**
   * A reader of `in`; a memory-mapped local file's footer is parsed once for all its readers
   * ([[MappedFiles]]: reading a snapshot opens its checkpoint for protocol / metaData and again
   * for the files). The footer does not depend on `options` (no metadata filter is set here).
   */
  private def openReader(in: InputFile, options: org.apache.parquet.ParquetReadOptions): ParquetFileReader = in match {
    case m: MappedInputFile =>
      val stream = m.newStream()
      try {
        // parquet-mr's footer decoding is the fallback for what ParquetFooter leaves to it (the
        // options of this reader never carry a metadata filter; decryption keys go to parquet-mr)
        def parse = (if (options.getDecryptionProperties == null) ParquetFooter.decode(m.buffer) else None)
          .getOrElse(ParquetFileReader.readFooter(m, options, stream))
        new ParquetFileReader(m, m.footer(parse), options, stream)
      }
      catch { case e: Throwable => stream.close(); throw e }
    case other => ParquetFileReader.open(other, options)
  }

  /**
   * The protocol / metaData rows of a memory-mapped checkpoint decoded from their column chunks
   * ([[ProtocolAndMetadataColumns]]), or None when that reader does not handle the file (then
   * parquet-mr reads them). Files whose footer deltalog does not parse itself, or that may be
   * encrypted, are left to parquet-mr.
   */
  private def decodedProtocolAndMetadata(conf: Configuration, m: MappedInputFile,
      want: CheckpointSchema.Fields): Option[IndexedSeq[Action]] = {
    if (conf.get(DecryptionPropertiesFactory.CRYPTO_FACTORY_CLASS_PROPERTY_NAME) != null) return None
    val footer = try m.footer(ParquetFooter.decode(m.buffer).orNull) catch { case NonFatal(_) => null }
    if (footer == null) return None
    val fileSchema = footer.getFileMetaData.getSchema
    if (!pmFilterApplies(fileSchema)) return None
    val requested = try requestedSchema(conf, want, fileSchema) catch { case NonFatal(_) => return None }
    ProtocolAndMetadataColumns.read(m.buffer, footer.getBlocks.asScala.toSeq, requested)
  }

  /**
   * How the rows of a set of top-level columns are read: the projected `schema`, and (built on
   * first use: plain `add` rows are decoded column-wise without them) the record materializer
   * and column IO that assemble rows.
   */
  private final class Plan(val schema: MessageType, build: () => (RecordMaterializer[Action], MessageColumnIO)) {
    private lazy val built = build()
    def materializer: RecordMaterializer[Action] = built._1
    def columnIO: MessageColumnIO = built._2
  }

  /** `fileSchema` projected to the columns of `want` (those the file has). */
  private def requestedSchema(conf: Configuration, want: CheckpointSchema.Fields, fileSchema: MessageType): MessageType =
    new CheckpointReadSupport(want).init(new InitContext(conf, java.util.Collections.emptyMap(), fileSchema))
      .getRequestedSchema

  /** Protocol / metaData rows of mapped checkpoints are decoded by deltalog (tests turn it off). */
  @volatile private[log] var DecodeProtocolAndMetadata: Boolean = true

  /** Row groups of local uncompressed checkpoints are read from their memory map (tests turn it off). */
  @volatile private[log] var MapRowGroups: Boolean = true

  /** Row groups with fewer rows read `add.stats` on the reader's own thread (tests lower it). */
  @volatile private[log] var ParallelStatsMinRows: Long = 32768

  private def readOptions(conf: Configuration, pmOnly: Boolean): org.apache.parquet.ParquetReadOptions = {
    val builder = HadoopReadOptions.builder(conf)
      .useStatsFilter(false).useDictionaryFilter(false).useRecordFilter(false)
      .useColumnIndexFilter(false).useBloomFilter(false).usePageChecksumVerification(false)
    // Protocol / metaData only: the page index (column index null pages) lets parquet-mr skip
    // every page in which both columns are null, i.e. nearly all of a large checkpoint.
    if (pmOnly) builder.useColumnIndexFilter(true).withRecordFilter(FilterCompat.get(PmFilter))
    builder.build()
  }

  private def readParquet(
      conf: Configuration,
      file: FileStatus,
      version: Long,
      want: CheckpointSchema.Fields,
      sink: ReplaySink,
      done: () => Boolean): Unit = {
    val path = file.getPath
    val pmOnly = !want.children.contains("add") && !want.children.contains("remove") &&
      want.children.contains("protocol")
    val in = try inputFile(conf, file) catch { case NonFatal(e) => throw corrupt(path, e) }
    if (pmOnly && DecodeProtocolAndMetadata) in match {
      case m: MappedInputFile => decodedProtocolAndMetadata(conf, m, want) match {
        case Some(actions) =>
          val it = actions.iterator
          while (it.hasNext && !done()) sink.accept(version, it.next())
          return
        case None =>
      }
      case _ =>
    }
    val reader =
      try openReader(in, readOptions(conf, pmOnly))
      catch { case NonFatal(e) => throw corrupt(path, e) }
    try {
      val fileSchema = reader.getFooter.getFileMetaData.getSchema
      val support = new CheckpointReadSupport(want)
      val requested = try requestedSchema(conf, want, fileSchema) catch { case NonFatal(e) => throw corrupt(path, e) }
      if (requested.getFieldCount == 0) return
      // One reading plan per set of top-level columns actually present in a row group.
      val plans = scala.collection.mutable.HashMap.empty[Seq[String], Plan]
      def plan(fields: Seq[String]): Plan =
        plans.getOrElseUpdate(fields, try {
          // "-add.x": child x of `add` left out (absent in every row of the row group).
          val dropAdd = fields.filter(_.startsWith(DropAddPrefix)).map(_.substring(DropAddPrefix.length)).toSet
          val schema = new MessageType(requested.getName, fields.filterNot(_.startsWith(DropAddPrefix)).map { f =>
            val t = requested.getType(requested.getFieldIndex(f))
            if (f != "add" || dropAdd.isEmpty) t
            else {
              val g = t.asGroupType()
              g.withNewFields(g.getFields.asScala.filterNot(c => dropAdd.contains(c.getName)).asJava)
            }
          }: _*)
          new Plan(schema, () => try {
            val materializer = support.prepareForRead(conf, java.util.Collections.emptyMap(), fileSchema,
              new org.apache.parquet.hadoop.api.ReadSupport.ReadContext(schema))
            val columnIO = new ColumnIOFactory(reader.getFooter.getFileMetaData.getCreatedBy, false)
              .getColumnIO(schema, fileSchema, true)
            (materializer, columnIO)
          } catch { case NonFatal(e) => throw corrupt(path, e) })
        } catch { case NonFatal(e) => throw corrupt(path, e) })
      // A sink taking plain adds column-wise gets protocol / metaData from the page-index read
      // first: otherwise their (nearly all null) columns would be assembled row by row for every
      // row of the file just to find two rows.
      val pmFirst = !pmOnly && sink.wantsPlainAdds && want.children.contains("protocol") &&
        want.children.contains("metaData") && pmFilterApplies(fileSchema)
      if (pmFirst) readProtocolAndMetadataOf(conf, file, version, sink)
      val topFields = requested.getFields.asScala.map(_.getName).toSeq
        .filterNot(f => pmFirst && (f == "protocol" || f == "metaData"))
      val blocks = reader.getRowGroups.asScala.toIndexedSeq
      if (pmOnly && pmFilterApplies(fileSchema)) {
        readProtocolAndMetadataRows(reader, blocks, topFields, plan, path, version, sink, done)
        return
      }
      var b = 0
      while (b < blocks.size && !done()) {
        val block = blocks(b)
        b += 1
        val present = topFields.filterNot(f => allNull(block, f))
        if ((pmOnly && noProtocolOrMetadata(block)) || present.isEmpty) {
          reader.skipNextRowGroup()
        } else {
          val dropped =
            if (pmOnly || !present.contains("add")) Nil
            else absentAddChildren(block, fileSchema, requested.getType(requested.getFieldIndex("add")).asGroupType())
          val full = plan(present ++ dropped.map(DropAddPrefix + _))
          val plainAdd = sink.wantsPlainAdds && present.contains("add") &&
            PlainAddColumns.applies(full.schema.getType(full.schema.getFieldIndex("add")).asGroupType())
          // A large row group's `add.stats` is decoded on a second thread with a reader of its
          // own, so this reader's projection leaves it out.
          val statsGroup = if (!plainAdd) null else full.schema.getType(full.schema.getFieldIndex("add")).asGroupType()
          val parallelStats =
            if (statsGroup == null || !statsGroup.containsField("stats") || sink.detachedStats == null ||
              block.getRowCount < ParallelStatsMinRows || block.getRowCount > Int.MaxValue ||
              CheckpointThreads.executor == null) null
            else new ParallelStatsReader(() => {
                // a second reader of the same file, sharing the footer already parsed
                val in = inputFile(conf, file)
                new ParquetFileReader(in, reader.getFooter, readOptions(conf, pmOnly = false), in.newStream())
              },
              new MessageType(requested.getName, statsGroup.withNewFields(java.util.List.of(statsGroup.getType("stats")))),
              block, localPath(file))
          if (plainAdd) sink.expectAddBytesPerRow(bytesPerRow(block, "add.path"), bytesPerRow(block, "add.stats"))
          // The stats thread is reading already: whatever fails from here on must stop it.
          try {
            if (parallelStats != null) {
              // the column goes to the stats thread now: when the sink keeps every add, it
              // appends while this thread still reads the other columns
              val ds = sink.detachedStats
              parallelStats.start(ds.detach(), ds.keepsEveryAdd)
            }
            val chosen = if (parallelStats == null) full else plan(present ++ (dropped :+ "stats").map(DropAddPrefix + _))
            val schema = chosen.schema
            reader.setRequestedSchema(schema)
            // Only calls into parquet-mr are wrapped: exceptions from the sink pass unchanged.
            // A local, uncompressed row group (delta-rs writes those) is read from the file's map in place.
            val mapped = if (!MapRowGroups) None else
              try localPath(file).flatMap(MappedColumnChunk.rowGroup(_, block, schema))
              catch { case NonFatal(e) => throw corrupt(path, e) }
            val pages = mapped match {
              case Some(m) => reader.skipNextRowGroup(); m
              case None => try reader.readNextRowGroup() catch { case NonFatal(e) => throw corrupt(path, e) }
            }
            if (pages == null) throw corrupt(path, new IllegalStateException(s"row group $b is missing"))
            val fixed = new LevelFixingPageStore(pages)
            // Plain adds are decoded column-wise; the other actions of the row group are assembled.
            val others = if (plainAdd) present.filterNot(_ == "add") else Nil
            if (!plainAdd || others.nonEmpty) {
              val p = if (plainAdd) plan(others) else chosen
              assembleRows(fixed, p.columnIO, p.materializer, path, version, sink, () => pmOnly && done())
            }
            if (plainAdd) {
              val addOnly = new MessageType(schema.getName, schema.getType(schema.getFieldIndex("add")))
              try PlainAddColumns.read(fixed, addOnly, reader.getFooter.getFileMetaData.getCreatedBy, version, sink,
                parallelStats)
              catch {
                case f: PlainAddColumns.SinkFailure => throw f.error
                case e: DeltalogException => throw e
                case NonFatal(e) => throw corrupt(path, e)
              }
            }
          } catch { case e: Throwable => if (parallelStats != null) parallelStats.abort(); throw e }
        }
      }
    } finally {
      try reader.close() catch { case NonFatal(_) => }
    }
  }

  /**
   * Bytes per row of the column `dotted` in `block` (its uncompressed size over the row count:
   * PLAIN values carry a 4-byte length, a dictionary page the distinct values once), 0 when absent.
   */
  private def bytesPerRow(block: BlockMetaData, dotted: String): Int = {
    val rows = block.getRowCount
    if (rows <= 0) return 0
    val it = block.getColumns.iterator()
    while (it.hasNext) {
      val c = it.next()
      if (c.getPath.toDotString == dotted) return math.min(c.getTotalUncompressedSize / rows, 1L << 20).toInt
    }
    0
  }

  /**
   * Assembles every row of `pages` into actions pushed to `sink`, stopping once `stop()` holds
   * after an action. Only calls into parquet-mr are wrapped: exceptions from the sink pass unchanged.
   */
  private def assembleRows(pages: PageReadStore, columnIO: MessageColumnIO, materializer: RecordMaterializer[Action],
      path: Path, version: Long, sink: ReplaySink, stop: () => Boolean): Unit = {
    val rows = pages.getRowCount
    val rr = try columnIO.getRecordReader(pages, materializer, FilterCompat.NOOP)
      catch { case NonFatal(e) => throw corrupt(path, e) }
    var i = 0L
    while (i < rows) {
      val action = try rr.read() catch { case NonFatal(e) => throw corrupt(path, e) }
      if (action != null) {
        sink.accept(version, action)
        if (stop()) i = rows
      }
      i += 1
    }
  }

  /** Pushes the protocol and metaData rows of one Parquet checkpoint file into `sink`. */
  private def readProtocolAndMetadataOf(conf: Configuration, file: FileStatus, version: Long, sink: ReplaySink): Unit = {
    val pm = new ProtocolAndMetadataSink(sink)
    readParquet(conf, file, version, CheckpointSchema.topLevelWant(skipStats = true, onlyProtocolAndMetadata = true,
      skipRemoves = true), pm, () => pm.found)
  }

  /** Passes actions on to `sink` and notes when both a protocol and a metaData were seen. */
  private final class ProtocolAndMetadataSink(sink: ReplaySink) extends ReplaySink {
    private var protocol = false
    private var metadata = false
    def found: Boolean = protocol && metadata
    override def accept(version: Long, action: Action): Unit = {
      action match {
        case _: Protocol => protocol = true
        case _: Metadata => metadata = true
        case _ =>
      }
      sink.accept(version, action)
    }
  }

  /** Rows with a protocol or a metaData (the column-index filter of the P&M-only read). */
  private val PmFilter = FilterApi.or(
    FilterApi.notEq(FilterApi.intColumn("protocol.minReaderVersion"), null.asInstanceOf[Integer]),
    FilterApi.notEq(FilterApi.binaryColumn("metaData.id"), null.asInstanceOf[Binary]))

  /** True when the file has both filter columns with the types [[PmFilter]] assumes. */
  private def pmFilterApplies(fileSchema: MessageType): Boolean = {
    def leaf(path: String*): Option[PrimitiveType] =
      if (!fileSchema.containsPath(path.toArray)) None
      else Some(fileSchema.getType(path: _*)).filter(_.isPrimitive).map(_.asPrimitiveType())
    leaf("protocol", "minReaderVersion").exists(_.getPrimitiveTypeName == PrimitiveTypeName.INT32) &&
      leaf("metaData", "id").exists(_.getPrimitiveTypeName == PrimitiveTypeName.BINARY)
  }

  /**
   * The protocol / metaData rows of a Parquet checkpoint. For each row group whose statistics do
   * not rule both columns out:
   *  1. the two probe leaves `protocol.minReaderVersion` and `metaData.id` are read through
   *     parquet-mr's column-index filter (only the pages holding a non-null value) and their
   *     definition levels give the exact rows whose `protocol` / `metaData` struct is present;
   *  2. when those rows are adjacent (the usual layout), only they are assembled (one row range).
   * Otherwise, without a page index, or if step 2 is refused, the filtered pages are assembled
   * row by row.
   */
  private def readProtocolAndMetadataRows(
      reader: ParquetFileReader,
      blocks: IndexedSeq[BlockMetaData],
      topFields: Seq[String],
      plan: Seq[String] => Plan,
      path: Path,
      version: Long,
      sink: ReplaySink,
      done: () => Boolean): Unit = {
    val fileSchema = reader.getFooter.getFileMetaData.getSchema
    def assemble(pages: PageReadStore, columnIO: MessageColumnIO, materializer: RecordMaterializer[Action]): Unit =
      assembleRows(pages, columnIO, materializer, path, version, sink, done)
    var b = 0
    while (b < blocks.size && !done()) {
      val block = blocks(b)
      val present = topFields.filterNot(f => allNull(block, f))
      if (block.getRowCount > 0 && !noProtocolOrMetadata(block) && present.nonEmpty) {
        val p = plan(present)
        val (schema, materializer, columnIO) = (p.schema, p.materializer, p.columnIO)
        // parquet-mr caches a row group's page index for the columns requested when it is first
        // used: create it for the whole projection before the probe narrows the request.
        reader.setRequestedSchema(schema)
        try reader.getColumnIndexStore(b) catch { case NonFatal(e) => throw corrupt(path, e) }
        val rows = try exactProtocolAndMetadataRows(reader, b, fileSchema, present)
          catch {
            case _: TooManyRows => None
            case NonFatal(e) => throw corrupt(path, e)
          }
        val exact = rows.flatMap { r =>
          if (r.isEmpty) Some(null)
          // Only one run of adjacent rows (delta-rs writes protocol and metaData last, Spark
          // first): parquet-mr misreads several disjoint single-row ranges inside one page.
          else if (r.last - r.head + 1 != r.length) None
          else {
            reader.setRequestedSchema(schema)
            try Option[PageReadStore](reader.readFilteredRowGroup(b, singleRowRanges(r, block.getRowCount)))
              .map(pages => new RowTrimmedPages(pages, r.head): PageReadStore)
            catch { case NonFatal(_) => None } // e.g. a column without offset index: general way
          }
        }
        exact match {
          case Some(null) => // no protocol / metaData row in this row group
          case Some(pages) => if (pages.getRowCount > 0) assemble(pages, columnIO, materializer)
          case None =>
            reader.setRequestedSchema(schema)
            val pages = try reader.readFilteredRowGroup(b) catch { case NonFatal(e) => throw corrupt(path, e) }
            if (pages != null && pages.getRowCount > 0) assemble(pages, columnIO, materializer)
        }
      }
      b += 1
    }
  }

  /**
   * Step 1 of [[readProtocolAndMetadataRows]]: the sorted row indexes (within row group `b`) of
   * the rows with a `protocol` or `metaData` struct, from the definition levels of the probe
   * leaves in the pages the column index keeps (walked as runs, [[PageLevelRuns]]; a page's slot
   * `i` is row `firstRowIndex + i`). None when the pages carry no row indexes (no page index: the
   * caller then assembles every row).
   */
  private def exactProtocolAndMetadataRows(
      reader: ParquetFileReader,
      b: Int,
      fileSchema: MessageType,
      present: Seq[String]): Option[Array[Long]] = {
    val probes = Seq("protocol" -> "minReaderVersion", "metaData" -> "id").filter(p => present.contains(p._1))
    if (probes.isEmpty) return Some(Array.emptyLongArray)
    val probeSchema = new MessageType(fileSchema.getName, probes.map { case (g, leaf) =>
      val group = fileSchema.getType(fileSchema.getFieldIndex(g)).asGroupType()
      group.withNewFields(group.getType(group.getFieldIndex(leaf)))
    }: _*)
    reader.setRequestedSchema(probeSchema)
    val pages = reader.readFilteredRowGroup(b)
    if (pages == null || pages.getRowCount == 0) return Some(Array.emptyLongArray)
    if (!pages.getRowIndexes.isPresent) return None
    val rows = new java.util.TreeSet[java.lang.Long]()
    probes.foreach { case (g, leaf) =>
      val d = probeSchema.getColumnDescription(Array(g, leaf))
      if (d.getMaxRepetitionLevel != 0) return None
      val pageReader = pages.getPageReader(d)
      var page = pageReader.readPage()
      while (page != null) {
        if (!page.getFirstRowIndex.isPresent) return None
        val first = page.getFirstRowIndex.get.longValue
        PageLevelRuns.definitionLevels(page, d, new HybridRle.RunVisitor {
          def run(start: Int, length: Int, level: Int): Boolean = {
            // the struct is present (its leaf may still be null); more than a few such rows is
            // not a checkpoint's protocol / metaData: let the general way read them
            if (level >= 1) {
              if (rows.size + length > MaxExactRows) throw new TooManyRows
              var i = 0
              while (i < length) { rows.add(first + start + i); i += 1 }
            }
            true
          }
        })
        page = pageReader.readPage()
      }
    }
    val out = new Array[Long](rows.size)
    var j = 0
    val it = rows.iterator()
    while (it.hasNext) { out(j) = it.next(); j += 1 }
    Some(out)
  }

  /** More protocol / metaData rows than [[MaxExactRows]] go through the general (filtered, row by row) read. */
  private val MaxExactRows = 1024
  private final class TooManyRows extends scala.util.control.ControlThrowable

  /** Row ranges made of exactly the given rows (sorted, distinct, adjacent). */
  private def singleRowRanges(rows: Array[Long], rowCount: Long): RowRanges = {
    val single = new OffsetIndex {
      override def getPageCount: Int = rows.length
      override def getOffset(i: Int): Long = 0L
      override def getCompressedPageSize(i: Int): Int = 0
      override def getFirstRowIndex(i: Int): Long = rows(i)
      override def getLastRowIndex(i: Int, rowGroupRowCount: Long): Long = rows(i)
    }
    RowRanges.create(rowCount, java.util.stream.IntStream.range(0, rows.length).iterator(), single)
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

  private val DropAddPrefix = "-add."

  /**
   * Children of the projected `add` struct that are absent in every row of the row group, so
   * that reading them only costs time (most checkpoints have no tags, deletion vectors, row
   * tracking or partition values): leaving them out of the projection gives the same actions.
   * A child is absent when one of its leaves has no definition level at or above the child's
   * own (size-statistics histogram), or, without histograms, when a primitive child is null in
   * every row. `partitionValues` also counts as absent when the map has no entry in any row,
   * since a null and an empty map both read as an empty map. At least one child is kept.
   */
  private def absentAddChildren(block: BlockMetaData, fileSchema: MessageType, add: GroupType): Seq[String] = {
    val cols = block.getColumns.asScala.filter(c => c.getPath.size > 1 && c.getPath.toArray.apply(0) == "add")
    def leavesOf(name: String) = cols.filter(_.getPath.toArray.apply(1) == name)
    def noLevelAtOrAbove(c: org.apache.parquet.hadoop.metadata.ColumnChunkMetaData, level: Int): Boolean = {
      val ss = c.getSizeStatistics
      val h = if (ss == null || !ss.isValid) null else ss.getDefinitionLevelHistogram
      val leafMax = fileSchema.getMaxDefinitionLevel(c.getPath.toArray: _*)
      h != null && h.size == leafMax + 1 && (level until h.size).forall(d => h.get(d) == 0L)
    }
    def allNullLeaf(c: org.apache.parquet.hadoop.metadata.ColumnChunkMetaData): Boolean = {
      val st = c.getStatistics
      st != null && !st.isEmpty && st.isNumNullsSet && st.getNumNulls == c.getValueCount
    }
    val out = add.getFields.asScala.map(_.getName).filter { name =>
      val leaves = leavesOf(name)
      leaves.nonEmpty && {
        val childLevel = fileSchema.getMaxDefinitionLevel("add", name)
        leaves.exists(noLevelAtOrAbove(_, childLevel)) ||
          (add.getType(name).isPrimitive && leaves.size == 1 && allNullLeaf(leaves.head)) ||
          (name == "partitionValues" && !add.getType(name).isPrimitive && {
            val g = add.getType(name).asGroupType()
            g.getFieldCount == 1 && g.getType(0).isRepetition(org.apache.parquet.schema.Type.Repetition.REPEATED) && {
              val entryLevel = fileSchema.getMaxDefinitionLevel("add", name, g.getType(0).getName)
              // the key is required in an entry: a null key level means no entry
              val key = Seq(name, g.getType(0).getName, g.getType(0).asGroupType().getType(0).getName)
              leaves.filter(_.getPath.toArray.toSeq.drop(1) == key)
                .exists(c => noLevelAtOrAbove(c, entryLevel) || allNullLeaf(c))
            }
          })
      }
    }.toSeq
    if (out.size >= add.getFieldCount) out.tail else out
  }

  /** True when row-group statistics prove no row of the group has a protocol or a metaData. */
  private[log] def noProtocolOrMetadata(block: BlockMetaData): Boolean = {
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
