import ByteRanges
import HLSPlaylist
import OriginClient

/// GETs over the origin client, with the status checked and failures as ``FailedFetch``.
struct HTTPFetcher: Sendable {
    let client: OriginClient
    /// The largest playlist read.
    static let maxPlaylistBytes = 64 << 20

    /// Starts a GET of `url` (of `range` of it) and returns once a 2xx head has arrived.
    func get(_ url: String, range: ByteRange?) async throws -> OriginResponse {
        var request = OriginRequest(url: url, acceptEncoding: range == nil && url.contains(".m3u8"))
        if let range {
            guard let requested = RequestedRange(range) else {
                throw FailedFetch(status: 400, description: "empty byte range \(range) for \(url)")
            }
            request.byteRange = requested
        }
        let response: OriginResponse
        do {
            response = try await client.fetch(request)
        } catch let error as OriginError {
            throw FailedFetch(error)
        }
        guard response.isSuccess else { throw FailedFetch.status(response.status, url: url) }
        return response
    }

    /// A whole playlist.
    func playlist(_ url: String) async throws -> [UInt8] {
        let response = try await get(url, range: nil)
        do {
            return try await response.body.collect(upTo: Self.maxPlaylistBytes)
        } catch let error as OriginError {
            throw FailedFetch(error)
        }
    }
}
