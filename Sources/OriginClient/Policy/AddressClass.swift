/// The kind of network an IP address belongs to, which decides whether the address policy lets a fetch reach it.
///
/// Only ``publicUnicast`` is reachable by default. IPv6 forms that embed an IPv4 address
/// (IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible `::a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`)
/// take the class of the embedded IPv4 address, so `::ffff:127.0.0.1` is ``loopback``.
public enum AddressClass: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// A globally routable unicast address.
    case publicUnicast = "public"
    /// `127.0.0.0/8`, `::1`.
    case loopback
    /// RFC 1918 (`10/8`, `172.16/12`, `192.168/16`), IPv6 unique-local `fc00::/7` and site-local `fec0::/10`.
    case privateNetwork = "private"
    /// `100.64.0.0/10`, the carrier-grade NAT shared address space (RFC 6598).
    case sharedAddressSpace = "shared"
    /// `169.254.0.0/16` (where cloud metadata services live) and `fe80::/10`.
    case linkLocal = "link_local"
    /// `0.0.0.0/8` and `::`; connecting to them reaches the local host on Linux.
    case unspecified
    /// `224.0.0.0/4`, `ff00::/8`.
    case multicast
    /// `255.255.255.255`.
    case broadcast
    /// Special-purpose ranges that are not public destinations: `240.0.0.0/4`, `192.0.0.0/24`,
    /// the documentation ranges (`192.0.2/24`, `198.51.100/24`, `203.0.113/24`, `2001:db8::/32`),
    /// benchmarking `198.18.0.0/15`, and the IPv6 discard prefix `100::/64`.
    case reserved

    /// A short name for messages: `public`, `loopback`, `private`, `link_local`…
    public var description: String { rawValue }
}
