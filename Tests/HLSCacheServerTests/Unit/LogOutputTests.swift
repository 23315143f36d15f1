import Foundation
import Glibc
import HLSCacheTestTraits
import HLSCacheTesting
import Testing

@testable import HLSCacheServer

/// The log's output: batched off the responding thread, in order, never waiting on a descriptor that does not read.
@Suite("Log output", .sharedMachine)
struct LogOutputTests {
    /// Reads what `descriptor` holds now (non-blocking).
    static func drain(_ descriptor: CInt) -> String {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            bytes += chunk[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func pipe() -> (read: CInt, write: CInt) {
        var ends: [CInt] = [0, 0]
        #expect(Glibc.pipe(&ends) == 0)
        _ = fcntl(ends[0], F_SETFL, fcntl(ends[0], F_GETFL) | O_NONBLOCK)
        return (ends[0], ends[1])
    }

    @Test("queued lines and a line written at once come out in the order they were given")
    func order() async throws {
        let (readEnd, writeEnd) = Self.pipe()
        defer { close(readEnd) }
        let output = LogOutput(descriptor: writeEnd)
        output.append("one\n")
        output.append("two\n")
        output.write("three: at once\n")
        output.append("four\n")
        output.flush()
        #expect(Self.drain(readEnd) == "one\ntwo\nthree: at once\nfour\n")
        output.append("five\n")
        var text = ""
        #expect(
            try await eventually(timeout: .seconds(5)) {
                text += Self.drain(readEnd)
                return text == "five\n"
            }, "the writer thread did not write a queued line: \(text)")
    }

    @Test("batch after batch, from two threads at once, every line comes out once and whole")
    func manyBatchesFromTwoThreads() async throws {
        let (readEnd, writeEnd) = Self.pipe()
        defer { close(readEnd) }
        let output = LogOutput(descriptor: writeEnd)
        let lines = 4_000
        var text = ""
        await withTaskGroup(of: Void.self) { group in
            for thread in ["a", "b"] {
                group.addTask {
                    for number in 0..<lines {
                        output.append(bytes: Array("\(thread) \(number) \(String(repeating: "=", count: 60))\n".utf8))
                        if number % 200 == 0 { try? await Task.sleep(for: .milliseconds(3)) }
                    }
                }
            }
            await group.waitForAll()
        }
        output.flush()
        #expect(
            try await eventually(timeout: .seconds(10)) {
                text += Self.drain(readEnd)
                return text.utf8.count(where: { $0 == UInt8(ascii: "\n") }) >= 2 * lines
            }, "lines were lost: \(text.suffix(200))")
        for thread in ["a", "b"] {
            let numbers = text.split(separator: "\n").filter { $0.hasPrefix("\(thread) ") }.map {
                Int($0.split(separator: " ")[1]) ?? -1
            }
            #expect(numbers == Array(0..<lines), "thread \(thread)'s lines are not each there once, in order")
        }
        #expect(text.split(separator: "\n").allSatisfy { $0.hasSuffix(String(repeating: "=", count: 60)) })
    }

    @Test("a descriptor nobody reads: appending never waits, lines past the bound are dropped and then counted")
    func fullPipeNeverBlocks() async throws {
        let (readEnd, writeEnd) = Self.pipe()
        defer { close(readEnd) }
        let output = LogOutput(descriptor: writeEnd, maxBufferedBytes: 100_000)
        let line = String(repeating: "x", count: 999) + "\n"
        let start = ContinuousClock.now
        for _ in 0..<1_000 { output.append(line) }  // 1 MB: the pipe (64 KiB) and the bound (100 KB) overflow
        output.write("an error while the pipe is full\n")
        #expect(ContinuousClock.now - start < .seconds(1), "appending waited on the pipe")
        var text = ""
        #expect(
            try await eventually(timeout: .seconds(10)) {
                text += Self.drain(readEnd)
                return text.contains("lines dropped")
            }, "no line counted the dropped ones")
        // Once the pipe is read again, lines flow again, in order.
        output.write("after the stall\n")
        #expect(
            try await eventually(timeout: .seconds(10)) {
                text += Self.drain(readEnd)
                return text.hasSuffix("after the stall\n")
            }, "lines did not flow again: \(text.suffix(200))")
    }

    @Test("timestamps are ISO 8601 in UTC with milliseconds, and now")
    func timestamps() throws {
        let stamp = LogTimestamp.now()
        #expect(stamp.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/) != nil, "\(stamp)")
        let parsed = try #require(try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(stamp))
        #expect(abs(parsed.timeIntervalSinceNow) < 2)
    }

    @Test("a thread's timestamps follow the clock past its cached second, each second as the formatter writes it")
    func timestampsFollowTheSecond() async throws {
        let parse = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        let first = try parse.parse(LogTimestamp.now())
        try await Task.sleep(for: .milliseconds(1_100))
        let second = try parse.parse(LogTimestamp.now())
        #expect(second.timeIntervalSince(first) >= 1, "\(first) then \(second)")
        for seconds in [0, 951_782_400, 1_795_710_602] {
            let prefix = String(decoding: LogTimestamp.secondPrefix(time_t(seconds)), as: UTF8.self)
            let expected = Date(timeIntervalSince1970: TimeInterval(seconds)).formatted(.iso8601).dropLast()
            #expect(prefix == expected + ".")
        }
    }
}
