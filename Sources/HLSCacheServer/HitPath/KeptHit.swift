import HTTPTypes
import NIOCore
import SegmentCache

/// A fresh hit kept by one thread (in its ``RememberedTarget``) so that the same hit is answered again without a
/// lookup while its ``SegmentCache/HitLease`` holds (at most ``SegmentCache/Configuration/heldEntryRecheck``): a
/// live playlist's rendering, or an object's whole body (an entry file, or a buffer of the in-memory tier). It keeps
/// the answer's own fields made once with their bytes, and the body: copied for this thread when small (no reference
/// count shared with the other threads), else shared (a buffer, or the entry file's slice, which keeps the
/// descriptor open). A kept hit no request took for a second is dropped by its thread's sweep (``ResolutionMemo``), so
/// that an evicted or purged entry's file is not held open by a target nobody asks for. A class: each hit takes it
/// from its target with one reference counted, not several.
///
/// A hit answered from it is the answer the lookup would plan: the lease holds exactly while a lookup would find the
/// same entry, fresh (the same file with the same expiry), and the fields and body are that entry's.
final class KeptHit {
    /// What says the hit still stands.
    let lease: SegmentCache.HitLease
    /// The answer's own fields (a playlist's ``RenderedPlaylist/hitFields(lastModified:)``, an object's
    /// ``ObjectHead``), this thread's copy.
    private let fields: MadeFields
    /// This thread's copy of the bytes, the shared buffer, or the entry file's slice.
    private let body: Answer.Body
    /// `Content-Length`.
    private let length: Int64
    /// The origin URL: the access record's.
    let url: String
    /// The access record's kind and stream.
    private let kind: RequestKind
    private let stream: String?
    /// Whether a request was answered from it since its thread's last sweep, which drops it otherwise
    /// (``ResolutionMemo``).
    var answeredSinceSweep = false
    /// The largest body copied for the thread (a live playlist of a few dozen segments is 1–5 KiB).
    static let copiedBodyLimit = 16 << 10

    /// Keeps `answer`, a fresh whole hit (200) planned by a lookup that gave `lease`, whose body is there to send (a
    /// buffer or a file); `nil` for any other answer (no lease, a range, HEAD, a stream). Its own fields are the
    /// entry's alone: what each request adds (its id, its CORS grant) the next answer takes from its own record.
    init?(_ answer: Answer, lease: SegmentCache.HitLease?) {
        guard let lease, answer.result == .hit, answer.status == .ok, let length = answer.length,
            let url = answer.record.originURL
        else { return nil }
        switch answer.body {
        case .memory(let buffer):
            body = .memory(
                buffer.readableBytes <= Self.copiedBodyLimit ? ByteBuffer(buffer.readableBytesView) : buffer)
        case .file(let slice):
            body = .file(slice)
        case .none, .stream:
            return nil
        }
        switch answer.ownFields {
        case .made(let made): fields = MadeFields(made.fields)
        case .list(let list): fields = MadeFields(list)
        }
        self.lease = lease
        self.length = length
        self.url = url
        self.kind = answer.record.kind
        self.stream = answer.record.stream
    }

    /// The kept hit's answer, for a request whose access record is `record` (made with this hit's ``url``).
    func answer(record: AccessRecord) -> Answer {
        answeredSinceSweep = true
        var record = record
        record.kind = kind
        record.stream = stream
        return Answer(.ok, made: fields, body: body, length: length, result: .hit, record: record)
    }
}
