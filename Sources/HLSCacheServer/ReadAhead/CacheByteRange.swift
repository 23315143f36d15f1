import SegmentCache

/// The cache's byte range, named apart from `HLSPlaylist.ByteRange` for files that import both modules.
typealias CacheByteRange = ByteRange

/// The cache's file region, named apart from NIO's `FileRegion`.
typealias CacheFileRegion = FileRegion
