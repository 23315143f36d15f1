import ByteRanges
import Foundation
import HTTPTypes
import OriginCache
import SegmentCache

/// The status and headers of an object answer, and which bytes of the cache response make its body: shared by the
/// Hummingbird responder and the event-loop hit path, so both answer the same request the same way.
struct ObjectHead {
    /// What players may cache objects for: segments do not change once published.
    static let cacheControl = "public, max-age=86400"

    /// An entry with an expiry (a manifest answered as stored, to a child node) is fresh for what remains of it;
    /// anything else for a day.
    static func cacheControl(expiry: Date?) -> String {
        guard let expiry else { return cacheControl }
        let remaining = min(max(0, expiry.timeIntervalSinceNow), Double(CacheDirectives.maxDeltaSeconds))
        return "public, max-age=\(Int(remaining))"
    }

    /// `X-Content-Type-Options`.
    static let contentTypeOptions = HTTPField.Name("X-Content-Type-Options")!

    /// Whether a browser would render `contentType` as a document (HTML, XHTML, SVG, any XML): such an object is
    /// sent with `Content-Security-Policy: sandbox`.
    static func isDocument(_ contentType: String) -> Bool {
        let essence = contentType.prefix { $0 != ";" }.lowercased()
        return essence.contains("html") || essence.contains("xml") || essence.contains("svg")
    }

    /// 200 or 206.
    var status: HTTPResponse.Status
    /// `Content-Type`, `Cache-Control`, `Accept-Ranges`, validators and `Content-Range`; not `Content-Length`.
    var headers: HTTPFields
    /// The bytes of the response's body to send, or `nil` for all of them.
    var window: ByteRange?
    /// The body length, when known.
    var length: Int64?

    /// How a request for an object is answered from a cache response.
    enum Outcome {
        /// Send the body (or `window` of it) with this head.
        case send(ObjectHead)
        /// 416: the range starts past the end; the headers carry `Content-Range: bytes */length`.
        case unsatisfiable(HTTPFields)
    }

    /// The answer to a request for `metadata`'s object.
    /// - Parameters:
    ///   - metadata: the cache response's metadata.
    ///   - requested: the request's `Range`, if any.
    ///   - result: how the cache served it (a bypassed object is `no-store`).
    ///   - cmsd: the server's CMSD, when it sends it: `CMSD-Static` is one of the object's own fields.
    static func make(
        metadata: EntryMetadata, requested: RequestedRange?, result: CacheResult, cmsd: CMSD? = nil
    ) -> Outcome {
        var headers = HTTPFields()
        let contentType =
            metadata.contentType ?? MediaTypes.byExtension(of: metadata.key.url) ?? "application/octet-stream"
        headers[.contentType] = contentType
        // An origin's bytes are never hlscache's own page: no type sniffed into a script or a document, and a
        // document type opened in a sandbox (no script, no same-origin access to hlscache's pages).
        headers[Self.contentTypeOptions] = "nosniff"
        if Self.isDocument(contentType) { headers[.contentSecurityPolicy] = "sandbox" }
        headers[.cacheControl] = result == .bypass ? "no-store" : cacheControl(expiry: metadata.expiry)
        headers[.acceptRanges] = "bytes"
        if let etag = metadata.etag { headers[.eTag] = etag }
        if let lastModified = metadata.lastModified { headers[.lastModified] = lastModified }
        // A manifest here is answered as stored, to a node that sent `Via`; players get it rewritten: a shared cache
        // in front must not give one the other's.
        if metadata.objectKind.isManifest { headers[.vary] = "Via" }
        // A manifest answered as stored (to a child node) whose origin redirected: where its references resolve
        // (without its query, which may be a token the redirect handed out).
        if let base = metadata.baseURL {
            headers[.contentLocation] = String(base.prefix { $0 != "?" && $0 != "#" })
        }
        if let cmsd {
            headers.append(cmsd.staticField(kind: metadata.objectKind, contentType: contentType, key: metadata.key))
        }

        // A request whose key carried the range: the cache answered exactly those bytes.
        if let range = metadata.key.range {
            let total = metadata.completeLength.map(String.init) ?? "*"
            let length = metadata.contentLength ?? range.length
            headers[.contentRange] = "bytes \(range.offset)-\(range.offset + length - 1)/\(total)"
            return .send(ObjectHead(status: .partialContent, headers: headers, window: nil, length: length))
        }
        // An open or suffix range: cut it from the whole object, whose length must be known.
        if let requested, let length = metadata.contentLength {
            guard let window = requested.resolved(length: length) else {
                headers[.contentRange] = "bytes */\(length)"
                return .unsatisfiable(headers)
            }
            headers[.contentRange] = "bytes \(window.offset)-\(window.upperBound - 1)/\(length)"
            return .send(ObjectHead(status: .partialContent, headers: headers, window: window, length: window.length))
        }
        return .send(ObjectHead(status: .ok, headers: headers, window: nil, length: metadata.contentLength))
    }
}
