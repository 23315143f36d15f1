import Foundation
import SegmentCache

extension CacheBody {
    /// Reads the whole body.
    func collect() async throws -> [UInt8] {
        var bytes: [UInt8] = []
        for try await chunk in self { bytes += chunk }
        return bytes
    }
}

/// Waits until `condition` holds, polling; fails the wait after `timeout`.
func eventually(
    timeout: Duration = .seconds(10),
    _ condition: () -> Bool
) async throws -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        if ContinuousClock.now > deadline { return false }
        try await Task.sleep(for: .milliseconds(2))
    }
    return true
}

/// Whether reading `body` throws rather than ending.
func bodyFails(_ body: CacheBody) async -> Bool {
    do {
        _ = try await body.collect()
        return false
    } catch {
        return true
    }
}
