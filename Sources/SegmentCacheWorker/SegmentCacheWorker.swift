import Foundation
import SegmentCache

/// A second process on a cache directory, for SegmentCache's crash-safety and two-process tests.
///
/// `SegmentCacheWorker <directory> <first key> <key count> <concurrency> <chunk delay µs> [sync]`
/// fills the keys `first..<first+count` from a deterministic fake origin, in a shuffled order,
/// `concurrency` at a time, reading every body to its end and checking it; prints `complete <n>` after
/// each (`start <n>` before) and `done` at the end. Exits 1 on a wrong body. The tests kill it with SIGKILL midway.
@main
struct SegmentCacheWorker {
    static func main() async {
        let arguments = CommandLine.arguments
        guard arguments.count >= 6, let first = Int(arguments[2]), let count = Int(arguments[3]),
            let concurrency = Int(arguments[4]), let delay = Int(arguments[5])
        else {
            FileHandle.standardError.write(
                Data("usage: SegmentCacheWorker <dir> <first> <count> <concurrency> <delay µs> [sync]\n".utf8))
            exit(2)
        }
        let configuration = SegmentCache.Configuration(
            directory: arguments[1],
            maxBytes: 1 << 40,
            sync: arguments.count > 6 && arguments[6] == "sync" ? .beforePublish : .never
        )
        let cache: SegmentCache
        do {
            cache = try SegmentCache(configuration: configuration, source: PatternOrigin(chunkDelayMicroseconds: delay))
        } catch {
            FileHandle.standardError.write(Data("cannot open cache: \(error)\n".utf8))
            exit(2)
        }
        let keys = (first..<first + count).shuffled()
        let failures = await withTaskGroup(of: Bool.self) { group in
            var next = keys.makeIterator()
            var failures = 0
            for _ in 0..<concurrency {
                guard let index = next.next() else { break }
                group.addTask { await fetch(index, from: cache) }
            }
            while let ok = await group.next() {
                if !ok { failures += 1 }
                if let index = next.next() { group.addTask { await fetch(index, from: cache) } }
            }
            return failures
        }
        await cache.close()
        say("done \(failures)")
        exit(failures == 0 ? 0 : 1)
    }

    /// Writes a line to standard output at once, unbuffered: the tests read progress as it comes.
    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    /// Fetches one key and checks its body; prints `complete <index>` when it is right.
    static func fetch(_ index: Int, from cache: SegmentCache) async -> Bool {
        let key = PatternOrigin.key(index)
        say("start \(index)")
        do {
            let response = try await cache.fetch(key)
            var received: [UInt8] = []
            for try await chunk in response.body { received += chunk }
            guard received == PatternOrigin.body(of: key) else {
                say("wrong \(index)")
                return false
            }
            say("complete \(index)")
            return true
        } catch {
            say("failed \(index) \(error)")
            return false
        }
    }
}

/// A fake origin whose bodies are a function of their URL, so any process can check any entry.
/// Keep in step with `PatternOrigin` in the SegmentCache tests.
struct PatternOrigin: ObjectSource {
    let chunkDelayMicroseconds: Int

    /// The key of object `index`: its URL carries its size.
    static func key(_ index: Int) -> CacheKey {
        CacheKey(url: "https://origin.test/pattern/\(index)/\(20_000 + (index &* 7_919) % 300_000).ts")
    }

    /// The body of the object at `key`: a pattern that depends on the URL and the position.
    static func body(of key: CacheKey) -> [UInt8] {
        let parts = key.url.split(separator: "/")
        let index = Int(parts[parts.count - 2]) ?? 0
        let size = Int(parts[parts.count - 1].dropLast(3)) ?? 0
        return (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index &* 17 &+ $0 >> 9) }
    }

    func fetch(_ key: CacheKey) async throws -> SourceResponse {
        let bytes = Self.body(of: key)
        let delay = chunkDelayMicroseconds
        let chunks = AsyncThrowingStream<[UInt8], any Error> { continuation in
            let task = Task {
                for start in stride(from: 0, to: bytes.count, by: 16_384) {
                    if delay > 0 { try? await Task.sleep(for: .microseconds(delay)) }
                    continuation.yield(Array(bytes[start..<min(start + 16_384, bytes.count)]))
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
        return SourceResponse(contentType: "video/mp2t", contentLength: Int64(bytes.count), body: SourceBody(chunks))
    }
}
