import Foundation
import HTTPTypes
import Logging
import NIOCore
import OriginCache
import SegmentCache

/// The purge routes (`--admin-token`): `PURGE <proxied target>` removes one object's entries (every byte range of
/// it too), `POST /admin/purge` with `prefix=<URL>` (in the query or a form body) every entry under a URL prefix.
/// Entries go from the disk cache and from memory (rewritten playlists and hot objects); fills of them in flight
/// still serve their readers but are not stored. Answers `200 {"purged":N}`; `401` without a bearer token, `403`
/// with a wrong one.
struct AdminPurge {
    let components: ServerComponents

    /// What a purge removes.
    enum Target {
        /// The entries of one key URL.
        case url(String)
        /// The entries under the prefix the request gives.
        case prefix
    }

    /// Checks the token and purges.
    /// - Parameters:
    ///   - target: what to remove.
    ///   - authorization: the request's `Authorization` field.
    ///   - query: its target's query.
    ///   - body: its body, if any.
    ///   - record: the access record.
    func answer(
        _ target: Target, authorization: String?, query: String, body: ByteBuffer?, record: AccessRecord
    ) async -> Answer {
        let metrics = components.metrics
        if let refusal = Self.refusal(authorization: authorization, record: record, components) {
            metrics.purgeRequest(result: refusal.status == .unauthorized ? "unauthorized" : "forbidden")
            return refusal
        }
        let purged: Int
        switch target {
        case .url(let url):
            purged = purge(matching: { $0 == url }) { $0.purge(url: url) }
        case .prefix:
            guard let prefix = prefix(query: query, body: body) else {
                metrics.purgeRequest(result: "invalid")
                return Answer(
                    failure: .badRequest,
                    reason: "give prefix=<origin URL or /o/ path> in the query or a form body", record: record)
            }
            purged = purge(matching: { $0.hasPrefix(prefix) }) { $0.purge(urlPrefix: prefix) }
        }
        metrics.purgeRequest(result: "ok")
        metrics.purged(entries: purged)
        components.logger.notice("purged", metadata: ["entries": "\(purged)", "request_id": "\(record.id)"])
        return Answer(
            .ok, buffer: ByteBuffer(string: "{\"purged\":\(purged)}\n"), contentType: "application/json",
            result: .bypass, record: record)
    }

    /// Removes matching keys from memory, then from the disk cache.
    /// - Returns: the disk entries removed.
    private func purge(matching url: @escaping @Sendable (String) -> Bool, disk: (SegmentCache) -> Int) -> Int {
        components.memory.playlists.remove { url($0.url) }
        components.memory.hotObjects.remove { url($0.url) }
        return disk(components.cache)
    }

    /// The prefix asked for, as an origin URL: `prefix=` from the query, else from a form body, else the body
    /// itself; a proxy path (`/o/https/host/…`, or a reverse-mode path) is turned into the origin URL it stands for.
    private func prefix(query: String, body: ByteBuffer?) -> String? {
        var text = FormValue.value("prefix", in: query)
        if text == nil, let body {
            let string = String(buffer: body).trimmingCharacters(in: .whitespacesAndNewlines)
            text = string.contains("=") ? FormValue.value("prefix", in: string) : (string.isEmpty ? nil : string)
        }
        guard var prefix = text, !prefix.isEmpty else { return nil }
        if prefix.hasPrefix("/") {
            guard
                let url = OriginTarget.originURL(
                    for: prefix, reverseOrigin: components.configuration.reverseOrigin)
            else { return nil }
            prefix = url
        }
        // In the keys' spelling: `HTTP://Host:80//a/` names what `http://host/a/` does.
        prefix = URLKeyForm.normalized(prefix)
        guard prefix.hasPrefix("http://") || prefix.hasPrefix("https://"), prefix.count > "https://".count else {
            return nil
        }
        return prefix
    }

    /// `401` without `Authorization: Bearer …`, `403` with a token that is not the admin token; `nil` when it is.
    static func refusal(
        authorization: String?, record: AccessRecord, _ components: ServerComponents
    ) -> Answer? {
        guard let token = components.configuration.adminToken else {
            return Answer(failure: .notFound, reason: "admin routes need --admin-token", record: record)
        }
        guard let authorization, authorization.lowercased().hasPrefix("bearer ") else {
            var answer = Answer(
                failure: .unauthorized, reason: "admin routes need Authorization: Bearer <admin token>",
                record: record)
            answer.setField(.wwwAuthenticate, to: "Bearer realm=\"hlscache admin\"")
            return answer
        }
        let given = authorization.dropFirst("bearer ".count).trimmingCharacters(in: .whitespaces)
        guard constantTimeEqual(Array(given.utf8), Array(token.utf8)) else {
            return Answer(failure: .forbidden, reason: "wrong admin token", record: record)
        }
        return nil
    }

    /// Compares without an early exit, so the time taken says nothing of where a guess went wrong.
    static func constantTimeEqual(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        var difference = UInt8(lhs.count == rhs.count ? 0 : 1)
        for index in 0..<max(lhs.count, rhs.count) {
            let left = index < lhs.count ? lhs[index] : 0
            let right = index < rhs.count ? rhs[index] : 0
            difference |= left ^ right
        }
        return difference == 0
    }
}
