import NIOCore

#if canImport(Glibc)
import Glibc
#endif

/// `TCP_CORK` around the answers of one flush whose body is a file region, as nginx's `tcp_nopush` does: the head,
/// written on its own, waits for the `sendfile` behind it and leaves in the same segment, instead of a segment
/// (and a wake-up of the player) of its own. On while a writer queues such an answer; off right after the flush,
/// which sends what is held at once (the kernel's own limit on a cork is 200 ms; it is never what ends one here).
struct SocketCork {
    /// Whether the socket is corked now.
    private(set) var isOn = false

    /// Corks `channel`'s socket unless it is already; on the channel's event loop.
    mutating func on(_ channel: any Channel) {
        guard !isOn else { return }
        isOn = Self.set(channel, 1)
    }

    /// Uncorks `channel`'s socket if it is corked; on the channel's event loop, after the flush.
    mutating func off(_ channel: any Channel) {
        guard isOn else { return }
        isOn = false
        _ = Self.set(channel, 0)
    }

    private static func set(_ channel: any Channel, _ value: SocketOptionValue) -> Bool {
        guard let options = channel.syncOptions else { return false }
        do {
            try options.setOption(.tcpOption(.init(rawValue: TCP_CORK)), value: value)
            return true
        } catch {
            return false
        }
    }
}
