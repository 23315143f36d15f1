import Foundation
import HLSPlaylist
import ManifestURLs
import OriginClient
import SegmentCache

/// hlscache's benchmark driver: `hlscache-bench NAME [ARGS]` prints `name value` lines.
/// Run through `bench/run.sh`, which builds it in release mode.

/// Median of `runs` timings of `body`, in milliseconds.
func medianMilliseconds(runs: Int, _ body: () throws -> Void) rethrows -> Double {
    var samples: [Double] = []
    samples.reserveCapacity(runs)
    for _ in 0..<runs {
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        samples.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
    }
    samples.sort()
    return samples[samples.count / 2]
}

/// A 10,000-segment VOD playlist: a KEY every 1,000 segments, half the URIs absolute with queries, half relative.
func generatedVOD(segments: Int) -> [UInt8] {
    var text = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:6\n#EXT-X-MEDIA-SEQUENCE:0\n#EXT-X-PLAYLIST-TYPE:VOD\n"
    for index in 0..<segments {
        if index % 1000 == 0 {
            text +=
                "#EXT-X-KEY:METHOD=AES-128,URI=\"https://keys.example.com/k/\(index / 1000).key?token=abcdef\",IV=0x\(String(format: "%032x", index))\n"
        }
        text += "#EXTINF:6.006000,\n"
        if index % 2 == 0 {
            text +=
                "https://cdn\(index % 4).example.com/vod/movie/1080p/segment_\(index).ts?exp=1700000000&sig=0a1b2c3d4e\n"
        } else {
            text += "segment_\(index).ts\n"
        }
    }
    text += "#EXT-X-ENDLIST\n"
    return Array(text.utf8)
}

func rewriteFigures(_ name: String, _ bytes: [UInt8]) throws {
    let mapping = URIMapping.proxy(base: "")
    let url = "https://cdn.example.com/vod/movie/1080p/index.m3u8?token=abc"
    var outputBytes = 0
    for _ in 0..<20 { outputBytes = try Playlist(parsing: bytes).rewritten(playlistURL: url, mapping: mapping).count }
    let median = try medianMilliseconds(runs: 200) {
        outputBytes = try Playlist(parsing: bytes).rewritten(playlistURL: url, mapping: mapping).count
    }
    precondition(outputBytes > bytes.count / 2)
    print("\(name)_ms \(String(format: "%.3f", median))")
    print(
        "\(name.replacingOccurrences(of: "_10k", with: ""))_mb_per_s \(String(format: "%.0f", Double(bytes.count) / 1e6 / (median / 1000)))"
    )
}

/// A manifest view's cost: the 10,000-segment playlist as a live one, rendered through `hlscache.window=60` (parse,
/// window, parse of the window, rewrite) against without (parse, rewrite), as the server renders each origin version.
/// Prints `views_render_10k_ms`, `views_plain_10k_ms` and `views_render_10k_vs_plain` (at most 2 is the target).
func viewFigures() throws {
    var text = String(decoding: generatedVOD(segments: 10_000), as: UTF8.self)
    text = text.replacingOccurrences(of: "#EXT-X-PLAYLIST-TYPE:VOD\n", with: "")
        .replacingOccurrences(of: "#EXT-X-ENDLIST\n", with: "")
    let bytes = Array(text.utf8)
    let view = try ManifestView(query: "hlscache.window=60")
    let mapping = URIMapping.proxy(base: "")
    let url = "https://cdn.example.com/live/1080p/index.m3u8?token=abc"
    var plainCount = 0
    var viewedCount = 0
    let plain = try medianMilliseconds(runs: 100) {
        plainCount = try Playlist(parsing: bytes).rewritten(playlistURL: url, mapping: mapping).count
    }
    let viewed = try medianMilliseconds(runs: 100) {
        viewedCount = try Playlist(parsing: bytes).viewed(by: view).rewritten(playlistURL: url, mapping: mapping).count
    }
    precondition(viewedCount > 0 && viewedCount < plainCount / 10, "the window did not cut the playlist")
    print("views_render_10k_ms \(String(format: "%.3f", viewed))")
    print("views_plain_10k_ms \(String(format: "%.3f", plain))")
    print("views_render_10k_vs_plain \(String(format: "%.2f", viewed / plain))")
}

// As `hlscache` does: the library's figures are measured under the allocator settings the server runs with.
HeapRetention.keepFreedMemory()
let arguments = CommandLine.arguments.dropFirst()
switch arguments.first {
case "rewrite":
    try rewriteFigures("rewrite_10k", generatedVOD(segments: 10_000))
    try viewFigures()
    if let largest = arguments.dropFirst().first {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: largest)))
        print("rewrite_corpus_largest_bytes \(bytes.count)")
        let median = try medianMilliseconds(runs: 200) {
            _ = try Playlist(parsing: bytes).rewritten(playlistURL: "https://h/p/x.m3u8", mapping: .proxy(base: ""))
        }
        print("rewrite_corpus_largest_ms \(String(format: "%.3f", median))")
        print("rewrite_corpus_largest_mb_per_s \(String(format: "%.0f", Double(bytes.count) / 1e6 / (median / 1000)))")
    }
case "rewrite-generate":
    // The 10,000-segment playlist of `rewrite`, for its peer (bench/tools/m3u8_rewrite.py).
    guard let path = arguments.dropFirst().first else { exit(64) }
    try Data(generatedVOD(segments: 10_000)).write(to: URL(fileURLWithPath: path))
case "origin":
    let values = Array(arguments.dropFirst())
    guard (3...4).contains(values.count), let count = Int(values[1]), let concurrency = Int(values[2]),
        let threads = values.count == 4 ? Int(values[3]) : OriginClientConfiguration.defaultWorkerThreads
    else {
        FileHandle.standardError.write(Data("usage: hlscache-bench origin URL COUNT CONCURRENCY [THREADS]\n".utf8))
        exit(64)
    }
    try await OriginBenchmark.run(url: values[0], count: count, concurrency: concurrency, threads: threads)
case "cache":
    try await CacheBenchmark.run()
case "dash-generate":
    guard let path = arguments.dropFirst().first else { exit(64) }
    try Data(DASHBenchmark.generatedMPD()).write(to: URL(fileURLWithPath: path))
case "dash":
    guard let path = arguments.dropFirst().first else { exit(64) }
    try DASHBenchmark.run(path: path)
case "fanout-clients":
    try FanoutClients.run(Array(arguments.dropFirst()))
default:
    FileHandle.standardError.write(
        Data(
            ("usage: hlscache-bench rewrite [LARGEST_CORPUS_FILE] | rewrite-generate FILE | origin URL COUNT CONCURRENCY [THREADS]"
                + " | cache | dash-generate FILE | dash FILE | fanout-clients PORT TARGET COUNT TIMEOUT SAMPLE_FILE\n")
                .utf8))
    exit(64)
}
