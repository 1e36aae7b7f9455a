package io.deltalog.log

import java.nio.charset.StandardCharsets.UTF_8

/**
 * A `map<string,string>` (partition values, tags) as UTF-8 bytes, entry by entry in the map's
 * iteration order (a null value stays null), for writers that lay maps out as bytes: the
 * checkpoint writer, the Arrow IPC export and the raw transfer to Python.
 */
private[deltalog] final class EncodedMap(val keys: Array[Array[Byte]], val values: Array[Array[Byte]]) {
  def size: Int = keys.length
}

private[deltalog] object EncodedMap {
  def of(m: Map[String, String]): EncodedMap = {
    val keys = new Array[Array[Byte]](m.size)
    val values = new Array[Array[Byte]](m.size)
    var j = 0
    m.foreach { case (k, v) =>
      keys(j) = k.getBytes(UTF_8)
      values(j) = if (v == null) null else v.getBytes(UTF_8)
      j += 1
    }
    new EncodedMap(keys, values)
  }

  /**
   * Encodes each distinct map object once: the files of one partition share their map (the state
   * interns them), so a state has few. The previous row's map is checked first (identity hashing
   * per row was half of an export's time); at most `limit` maps are remembered.
   */
  final class Cache(limit: Int) {
    private val byIdentity = new java.util.IdentityHashMap[Map[String, String], EncodedMap]()
    private var lastMap: Map[String, String] = _
    private var lastEncoded: EncodedMap = _

    def apply(m: Map[String, String]): EncodedMap = {
      if (m eq lastMap) return lastEncoded
      var e = byIdentity.get(m)
      if (e == null) {
        e = of(m)
        if (byIdentity.size < limit) byIdentity.put(m, e)
      }
      lastMap = m
      lastEncoded = e
      e
    }
  }
}
