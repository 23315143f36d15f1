extension IPAddress {
    /// The class of network this address belongs to.
    public var addressClass: AddressClass {
        switch self {
        case .v4(let value):
            return Self.classify(v4: value)
        case .v6(let value):
            return Self.classify(v6: value)
        }
    }

    /// The IPv4 address embedded in an IPv4-mapped, IPv4-compatible, NAT64 or 6to4 IPv6 address.
    public var embeddedIPv4: UInt32? {
        guard case .v6(let value) = self else { return nil }
        let low32 = UInt32(truncatingIfNeeded: value)
        if value >> 32 == 0xFFFF {  // ::ffff:a.b.c.d
            return low32
        }
        if value >> 32 == 0, low32 > 1 {  // ::a.b.c.d, but not :: or ::1
            return low32
        }
        if value >> 32 == 0x0064_FF9B_0000_0000_0000_0000 {  // 64:ff9b::a.b.c.d
            return low32
        }
        if value >> 112 == 0x2002 {  // 2002:aabb:ccdd::/48
            return UInt32(truncatingIfNeeded: value >> 80)
        }
        return nil
    }

    private static func classify(v4 value: UInt32) -> AddressClass {
        func within(_ prefix: UInt32, _ length: Int) -> Bool {
            value >> (32 - length) == prefix >> (32 - length)
        }
        if value == 0xFFFF_FFFF { return .broadcast }
        if within(0x0000_0000, 8) { return .unspecified }
        if within(0x7F00_0000, 8) { return .loopback }
        if within(0x0A00_0000, 8) || within(0xAC10_0000, 12) || within(0xC0A8_0000, 16) { return .privateNetwork }
        if within(0x6440_0000, 10) { return .sharedAddressSpace }
        if within(0xA9FE_0000, 16) { return .linkLocal }
        if within(0xE000_0000, 4) { return .multicast }
        if within(0xF000_0000, 4) { return .reserved }
        if within(0xC000_0000, 24) || within(0xC000_0200, 24) || within(0xC633_6400, 24)
            || within(0xCB00_7100, 24) || within(0xC612_0000, 15)
        {
            return .reserved
        }
        return .publicUnicast
    }

    private static func classify(v6 value: UInt128) -> AddressClass {
        func within(_ prefix: UInt128, _ length: Int) -> Bool {
            value >> (128 - length) == prefix >> (128 - length)
        }
        if value == 0 { return .unspecified }
        if value == 1 { return .loopback }
        if let v4 = IPAddress.v6(value).embeddedIPv4 {
            return classify(v4: v4)
        }
        if within(0xFC00 << 112, 7) || within(0xFEC0 << 112, 10) { return .privateNetwork }
        if within(0xFE80 << 112, 10) { return .linkLocal }
        if within(0xFF00 << 112, 8) { return .multicast }
        if within(0x2001_0DB8 << 96, 32) || within(0x0100 << 112, 64) { return .reserved }
        return .publicUnicast
    }
}
