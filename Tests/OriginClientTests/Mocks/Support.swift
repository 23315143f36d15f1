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

/// Reads a whole body, checking each byte against ``StreamOrigin/patternByte(at:)``; returns the byte count.
func readPattern(_ body: OriginBody) async throws -> (count: Int, mismatches: Int) {
    var offset = 0
    var mismatches = 0
    for try await chunk in body {
        for byte in chunk {
            if byte != StreamOrigin.patternByte(at: offset) { mismatches += 1 }
            offset += 1
        }
        // A byte at a time is slow in a debug build: let the in-process origin (on the same two pool threads) run.
        await Task.yield()
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
