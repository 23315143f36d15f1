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

/// Whether reading `body` throws rather than ending.
func bodyFails(_ body: CacheBody) async -> Bool {
    do {
        _ = try await body.collect()
        return false
    } catch {
        return true
    }
}

/// Whether reading `body` throws a ``CacheError`` of `kind`'s kind rather than ending (or failing otherwise).
func bodyFails(_ body: CacheBody, with kind: CacheError) async -> Bool {
    do {
        _ = try await body.collect()
        return false
    } catch {
        return (error as? CacheError)?.isSameKind(as: kind) == true
    }
}
