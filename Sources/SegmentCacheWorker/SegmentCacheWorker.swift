import Foundation
import HLSCacheTesting
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
            guard TestBytes.equal(received, PatternOrigin.body(of: key)) else {
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
