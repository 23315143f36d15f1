import HLSCacheTesting
import OriginClient

/// A client that may reach the test origins: `127.0.0.1` is listed exactly, so its loopback address is allowed.
func makeClient(
    allowedHosts: [String] = ["127.0.0.1"],
    _ configure: (inout OriginClientConfiguration) -> Void = { _ in }
) throws -> OriginClient {
    var configuration = OriginClientConfiguration(policy: AddressPolicy(allowedHosts: allowedHosts))
    configure(&configuration)
    return try OriginClient(configuration: configuration)
}

/// An origin whose answers stay in progress, so that their transfers stay active: each request gets a head
/// announcing 1 MiB and a first kilobyte, then the rest waits until the client leaves (at most two minutes: a test
/// of held transfers took 23 s under the whole suite, and its first one ended when an origin holding 20 s let it go).
/// `/done` is answered whole (`end`), for a transfer that finishes.
func holdingOrigin() throws -> RawOrigin {
    try RawOrigin { _, connection in
        guard let request = connection.readRequest() else { return }
        if request.hasPrefix("GET /done") {
            connection.send("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nend")
            return
        }
        connection.send("HTTP/1.1 200 OK\r\nContent-Length: 1048576\r\n\r\n")
        connection.send([UInt8](repeating: 0x46, count: 1024))
        _ = connection.waitForPeerClose(timeout: .seconds(120))
    }
}

/// Reads a whole body, checking each byte against ``StreamOrigin/patternByte(at:)``; returns the byte count.
func readPattern(_ body: OriginBody) async throws -> (count: Int, mismatches: Int) {
    var offset = 0
    var mismatches = 0
    let pattern = StreamOrigin.bytesPattern
    for try await chunk in body {
        // The pattern from `offset` on is the pattern from `offset` modulo its period on (memcmp: a byte loop of a
        // debug build held a pool thread, which the in-process origin needs too). A chunk longer than the 16 MiB
        // copy (none is) counts its excess as mismatches.
        let start = offset % StreamOrigin.patternPeriod
        let expected = pattern[start..<min(pattern.count, start + chunk.count)]
        if !TestBytes.equal(chunk[...], expected) { mismatches += TestBytes.differences(chunk[...], expected) }
        offset += chunk.count
    }
    return (offset, mismatches)
}

/// Reads a whole body, returning the bytes read before it ended or failed, and the error if it failed.
func drain(_ body: OriginBody) async -> (count: Int, error: (any Error)?) {
    var count = 0
    do {
        for try await chunk in body { count += chunk.count }
        return (count, nil)
    } catch {
        return (count, error)
    }
}
