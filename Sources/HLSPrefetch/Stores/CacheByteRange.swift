import SegmentCache

/// The cache's byte range (this file imports only SegmentCache, so the name is unambiguous here).
typealias CacheByteRange = ByteRange
