import HTTPTypes
import NIOCore
import OriginCache
import SegmentCache
import Synchronization

/// Common Media Server Data (CTA-5006): what the server tells players with each answer (`--cmsd`, on by default).
///
/// - `CMSD-Static` (an answer's own field, made where its other own fields are, so kept hits send it at no cost):
///   `ot` (`m` manifest, `i` an initialization section a manifest named (``InitSections``), `v`/`a`/`av` media by its
///   type, `k` key, `o` other), `st` (`v` VOD or `l` live, for a
///   manifest) and `n`, the node's name (as in the fleet's `Via`); an LL-HLS blocking reload's answer that was held
///   (parked, or planned while its fill ran) adds `ht`, how long, in milliseconds (``Answer/noteHeld(since:)``).
/// - `CMSD-Dynamic` (the connection's, ``dynamicLine(deliveryRate:roundTrip:)``): `n` with `etp`, the estimated
///   throughput in kbit/s, and `rtt` in milliseconds, both measured by the kernel for that client's connection
///   (`TCP_INFO`'s delivery rate and smoothed round-trip time), not guessed.
struct CMSD: Sendable {
    /// `CMSD-Static`.
    static let staticName = HTTPField.Name("CMSD-Static")!
    /// `CMSD-Dynamic`.
    static let dynamicName = HTTPField.Name("CMSD-Dynamic")!

    /// The node's name as an RFC 8941 string.
    private let node: String
    /// The initialization sections the manifests rendered here named.
    let initSections = InitSections()

    /// The CMSD of node `nodeName` (letters, digits, `.`, `-`, `_`: ``FleetHop/isValidName(_:)``).
    init(nodeName: String) {
        node = "\"" + nodeName.filter { $0 != "\"" && $0 != "\\" } + "\""
    }

    /// The `CMSD-Static` field of an object of `kind` and `contentType`, of a stream of type `streamType` when known.
    /// - Parameter key: the object's key, for a media object: `ot=i` when a manifest named it as an initialization
    ///   section.
    func staticField(kind: ObjectKind, contentType: String?, live: Bool? = nil, key: CacheKey? = nil) -> HTTPField {
        let type =
            if kind == .media, let key, initSections.contains(key) { "i" } else {
                Self.objectType(kind, contentType: contentType)
            }
        var value = "ot=" + type
        if let live { value += live ? ",st=l" : ",st=v" }
        return HTTPField(name: Self.staticName, value: value + ",n=" + node)
    }

    /// CTA-5006's object type of an answer.
    static func objectType(_ kind: ObjectKind, contentType: String?) -> String {
        switch kind {
        case .hlsPlaylist, .dashManifest: return "m"
        case .key: return "k"
        case .other, .unknown: return "o"
        case .media:
            let type = contentType?.lowercased() ?? ""
            if type.hasPrefix("audio/") { return "a" }
            if type.hasPrefix("video/mp2t") { return "av" }
            return "v"
        }
    }

    /// The `CMSD-Dynamic` line (CRLF included) for a connection whose kernel measures `deliveryRate` bytes per second
    /// and a smoothed round trip of `roundTrip` microseconds (HTTP/1's answers write it as bytes).
    func dynamicLine(deliveryRate: UInt64, roundTrip: UInt32) -> ByteBuffer {
        var line = ByteBuffer()
        line.writeString(Self.dynamicName.rawName)
        line.writeStaticString(": ")
        line.writeString(dynamicValue(deliveryRate: deliveryRate, roundTrip: roundTrip))
        line.writeStaticString("\r\n")
        return line
    }

    /// The `CMSD-Dynamic` value: `n`, with `etp` (kbit/s) and `rtt` (ms); a figure the kernel has not measured yet (0)
    /// is left out.
    func dynamicValue(deliveryRate: UInt64, roundTrip: UInt32) -> String {
        var value = node
        if deliveryRate > 0 {
            value += ";etp=" + String(deliveryRate.multipliedReportingOverflow(by: 8).partialValue / 1000)
        }
        if roundTrip > 0 { value += ";rtt=" + String((roundTrip + 500) / 1000) }
        return value
    }
}

/// The initialization sections (HLS `EXT-X-MAP`, DASH `Initialization`) of the manifests rendered here, by key: what
/// tells CMSD's `ot=i` from media, which an entry does not record (its kind is `media` either way). Noted at each
/// rendering of a media playlist or an MPD, so the ones players fetch are known; bounded (``ClockMap``, hashes only).
final class InitSections: Sendable {
    private let hashes = Mutex(ClockMap<Int, Void>(capacity: 4096))

    /// Notes `keys` as initialization sections.
    func note(_ keys: [CacheKey]) {
        guard !keys.isEmpty else { return }
        hashes.withLock { hashes in
            for key in keys { _ = hashes.insert((), forKey: key.hashValue) }
        }
    }

    /// Whether a manifest named `key` as an initialization section (a hash's collision may say so of another key,
    /// once in 2^64).
    func contains(_ key: CacheKey) -> Bool {
        let hash = key.hashValue
        return hashes.withLock { $0.contains(hash) }
    }
}

extension Answer {
    /// Adds `ht` (held time, CTA-5006) to the answer's `CMSD-Static`, when it has one: the milliseconds since
    /// `since`, when an LL-HLS blocking reload arrived that waited for its fill.
    ///
    /// The field is found by a scan and replaced in place: a name lookup in `HTTPFields` builds its index of names, a
    /// hash of every one, on each of the thousand answers an LL-HLS fill wakes.
    mutating func noteHeld(since: ContinuousClock.Instant, now: ContinuousClock.Instant = .now) {
        var fields = ownFields.fields
        guard let index = fields.firstIndex(where: { $0.name == CMSD.staticName }) else { return }
        let held = max(.zero, now - since)
        let milliseconds = held.components.seconds * 1000 + held.components.attoseconds / 1_000_000_000_000_000
        fields[index].value = fields[index].value + ",ht=" + String(milliseconds)
        replaceOwnFields(with: fields)
    }
}

/// A connection's `CMSD-Dynamic` as its writer writes it (`Form`: the line's bytes for HTTP/1, the field's value for
/// HTTP/2), made again from what the kernel measures at most every ``measureInterval``: one rule for both writers.
struct DynamicCMSD<Form> {
    /// How long a measure of the connection's throughput and round trip is used for its answers.
    static var measureInterval: TimeAmount { .milliseconds(200) }

    private var last: (form: Form, at: NIODeadline)?

    /// The form for an answer written now on `channel` (on its loop); `nil` with `--cmsd off` (`cmsd` is `nil`), or
    /// when the kernel cannot be asked.
    mutating func current(
        on channel: any Channel, cmsd: CMSD?, _ make: (CMSD, KernelTCPInfo) -> Form
    ) -> Form? {
        guard let cmsd else { return nil }
        let now = NIODeadline.now()
        if let last, now - last.at < Self.measureInterval { return last.form }
        guard let info = KernelTCPInfo.measure(channel) else { return nil }
        let form = make(cmsd, info)
        last = (form, now)
        return form
    }
}

/// The kernel's `struct tcp_info` (Linux, `<linux/tcp.h>`) as bytes: glibc's declaration stops before
/// `tcpi_delivery_rate`. The layout only ever grows at its end; a kernel that fills less leaves the rest zero.
struct KernelTCPInfo: Sendable {
    // 232 bytes: the struct of Linux 6.x (29 words).
    var words:
        (
            UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
            UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
            UInt64, UInt64, UInt64
        ) = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)

    /// `tcpi_rtt`: the smoothed round-trip time, in microseconds.
    var roundTrip: UInt32 { withUnsafeBytes(of: words) { $0.loadUnaligned(fromByteOffset: 68, as: UInt32.self) } }
    /// `tcpi_delivery_rate`: the recent delivery rate, in bytes per second.
    var deliveryRate: UInt64 {
        withUnsafeBytes(of: words) { $0.loadUnaligned(fromByteOffset: 160, as: UInt64.self) }
    }

    /// What the kernel measures now for `channel`'s socket, when it is a TCP socket read on its event loop.
    static func measure(_ channel: any Channel) -> KernelTCPInfo? {
        guard let provider = channel as? any SocketOptionProvider, channel.eventLoop.inEventLoop else { return nil }
        var info: KernelTCPInfo?
        // Completed at once on the channel's loop.
        let future: EventLoopFuture<KernelTCPInfo> = provider.unsafeGetSocketOption(level: .tcp, name: .tcp_info)
        future.assumeIsolated().whenSuccess { info = $0 }
        return info
    }
}
