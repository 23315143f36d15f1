import ByteRanges
import HLSCacheTestTraits
import Testing

@testable import OriginClient

/// The address policy over every address class, IPv4 and IPv6. Nothing here touches the network.
@Suite(.sharedMachine) struct AddressPolicyTests {
    static let classified: [(String, AddressClass)] = [
        // IPv4
        ("93.184.216.34", .publicUnicast),
        ("8.8.8.8", .publicUnicast),
        ("1.1.1.1", .publicUnicast),
        ("127.0.0.1", .loopback),
        ("127.255.255.254", .loopback),
        ("10.0.0.1", .privateNetwork),
        ("10.255.255.255", .privateNetwork),
        ("172.16.0.1", .privateNetwork),
        ("172.31.255.255", .privateNetwork),
        ("172.32.0.1", .publicUnicast),
        ("172.15.255.255", .publicUnicast),
        ("192.168.1.1", .privateNetwork),
        ("100.64.0.1", .sharedAddressSpace),
        ("100.127.255.255", .sharedAddressSpace),
        ("100.128.0.1", .publicUnicast),
        ("100.63.255.255", .publicUnicast),
        ("169.254.169.254", .linkLocal),
        ("169.254.0.1", .linkLocal),
        ("0.0.0.0", .unspecified),
        ("0.1.2.3", .unspecified),
        ("224.0.0.1", .multicast),
        ("239.255.255.250", .multicast),
        ("255.255.255.255", .broadcast),
        ("240.0.0.1", .reserved),
        ("192.0.2.1", .reserved),
        ("198.51.100.7", .reserved),
        ("203.0.113.9", .reserved),
        ("198.18.0.1", .reserved),
        // IPv6
        ("2606:2800:220:1:248:1893:25c8:1946", .publicUnicast),
        ("2001:4860:4860::8888", .publicUnicast),
        ("::1", .loopback),
        ("::", .unspecified),
        ("fc00::1", .privateNetwork),
        ("fd12:3456:789a::1", .privateNetwork),
        ("fec0::1", .privateNetwork),
        ("fe80::1", .linkLocal),
        ("febf::1", .linkLocal),
        ("ff02::1", .multicast),
        ("2001:db8::1", .reserved),
        ("100::1", .reserved),
        // IPv4 inside IPv6: mapped, compatible, NAT64, 6to4
        ("::ffff:127.0.0.1", .loopback),
        ("::ffff:10.1.2.3", .privateNetwork),
        ("::ffff:169.254.169.254", .linkLocal),
        ("::ffff:100.64.0.1", .sharedAddressSpace),
        ("::ffff:0.0.0.0", .unspecified),
        ("::ffff:255.255.255.255", .broadcast),
        ("::ffff:224.0.0.1", .multicast),
        ("::ffff:8.8.8.8", .publicUnicast),
        ("::127.0.0.1", .loopback),
        ("::10.0.0.1", .privateNetwork),
        ("::169.254.169.254", .linkLocal),
        ("::8.8.8.8", .publicUnicast),
        ("64:ff9b::7f00:1", .loopback),
        ("64:ff9b::a9fe:a9fe", .linkLocal),
        ("2002:7f00:1::1", .loopback),
        ("2002:a00:1::1", .privateNetwork),
        ("2002:808:808::1", .publicUnicast),
    ]

    @Test(arguments: classified)
    func addressesAreClassified(text: String, expected: AddressClass) throws {
        let address = try #require(IPAddress(text))
        #expect(address.addressClass == expected, "\(text)")
    }

    @Test(arguments: ["", "example.com", "1.2.3", "256.1.1.1", "::g", "1.2.3.4.5", "fe80::1%eth0"])
    func nonAddressesDoNotParse(text: String) {
        #expect(IPAddress(text) == nil)
    }

    @Test func addressesRoundTripThroughText() throws {
        #expect(try #require(IPAddress("10.0.0.1")) == .v4(0x0A00_0001))
        #expect(try #require(IPAddress("[::1]")) == .v6(1))
        #expect(try #require(IPAddress("::ffff:127.0.0.1")).description == "::ffff:127.0.0.1")
        #expect(try #require(IPAddress("2001:DB8:0:0::1")).description == "2001:db8::1")
        #expect(IPAddress(bytes: [192, 0, 2, 1]) == IPAddress("192.0.2.1"))
        #expect(IPAddress(bytes: [1, 2, 3]) == nil)
    }

    @Test func defaultPolicyAllowsOnlyPublicAddresses() throws {
        let policy = AddressPolicy()
        for (text, addressClass) in Self.classified {
            let address = try #require(IPAddress(text))
            let allowed = policy.isAllowed(address: address, host: "cdn.example.com")
            #expect(allowed == (addressClass == .publicUnicast), "\(text) is \(addressClass)")
        }
    }

    @Test func privateNetworksSwitchAllowsPrivateButNotLinkLocalOrSpecial() throws {
        let policy = AddressPolicy(allowPrivateNetworks: true)
        let allowedClasses: Set<AddressClass> = [
            .publicUnicast, .loopback, .privateNetwork, .sharedAddressSpace, .reserved,
        ]
        for (text, addressClass) in Self.classified {
            let address = try #require(IPAddress(text))
            let allowed = policy.isAllowed(address: address, host: "origin.internal")
            #expect(allowed == allowedClasses.contains(addressClass), "\(text) is \(addressClass)")
        }
    }

    @Test func exactlyListedHostMayResolveToPrivateAddresses() throws {
        let policy = AddressPolicy(allowedHosts: ["origin.internal", "*.example.com"])
        let loopback = try #require(IPAddress("127.0.0.1"))
        let metadata = try #require(IPAddress("169.254.169.254"))
        let mapped = try #require(IPAddress("::ffff:10.0.0.1"))
        let unspecified = try #require(IPAddress("0.0.0.0"))
        #expect(policy.isAllowed(address: loopback, host: "origin.internal"))
        #expect(policy.isAllowed(address: metadata, host: "origin.internal"))
        #expect(policy.isAllowed(address: mapped, host: "ORIGIN.internal."))
        #expect(!policy.isAllowed(address: unspecified, host: "origin.internal"))
        // Through the wildcard, only public addresses.
        #expect(!policy.isAllowed(address: loopback, host: "cdn.example.com"))
        #expect(!policy.isAllowed(address: mapped, host: "cdn.example.com"))
        #expect(policy.isAllowed(address: try #require(IPAddress("93.184.216.34")), host: "cdn.example.com"))
    }

    @Test func hostPatternsMatchAsDocumented() {
        let policy = AddressPolicy(allowedHosts: ["example.com", "*.cdn.net", "[2001:db8::1]"])
        #expect(policy.allows(host: "example.com"))
        #expect(policy.allows(host: "Example.COM."))
        #expect(!policy.allows(host: "www.example.com"))
        #expect(!policy.allows(host: "badexample.com"))
        #expect(policy.allows(host: "a.cdn.net"))
        #expect(policy.allows(host: "a.b.cdn.net"))
        #expect(!policy.allows(host: "cdn.net"))
        #expect(!policy.allows(host: "evilcdn.net"))
        #expect(policy.allows(host: "[2001:db8::1]"))
        #expect(policy.allows(host: "2001:db8:0::1"))
        #expect(policy.isListedExactly(host: "example.com"))
        #expect(!policy.isListedExactly(host: "a.cdn.net"))
        #expect(AddressPolicy().allows(host: "anything.example"))
        #expect(!AddressPolicy(allowedHosts: []).allows(host: "example.com"))
    }

    @Test func checkRefusesUnlistedHostsBeforeResolving() {
        let policy = AddressPolicy(allowedHosts: ["*.example.com"])
        #expect(throws: Never.self) { try policy.check(host: "cdn.example.com") }
        let error = #expect(throws: OriginError.self) { try policy.check(host: "evil.test") }
        #expect(error?.kind == .refused)
        #expect(error?.label == "refused")
    }

    @Test func literalAddressesAreRefusedBeforeAnyConnection() {
        let configuration = OriginClientConfiguration()
        for url in ["http://169.254.169.254/latest/meta-data/", "http://[::1]:8080/x", "http://10.0.0.1/a.m3u8"] {
            let error = #expect(throws: OriginError.self) {
                _ = try PreparedRequest(OriginRequest(url: url), configuration: configuration)
            }
            #expect(error?.kind == .refused, "\(url)")
        }
        #expect(throws: Never.self) {
            _ = try PreparedRequest(OriginRequest(url: "http://93.184.216.34/a.ts"), configuration: configuration)
        }
    }

    @Test func invalidRequestsAreRejected() {
        let configuration = OriginClientConfiguration()
        let requests = [
            OriginRequest(url: "not a url"),
            OriginRequest(url: "file:///etc/passwd"),
            OriginRequest(url: "ftp://example.com/a"),
            OriginRequest(url: "https://example.com/a", headers: [("X-Evil", "a\r\nHost: b")]),
            OriginRequest(url: "https://example.com/a", headers: [("Bad Name", "v")]),
            OriginRequest(url: "https://example.com/a", byteRange: .suffix(0)),
        ]
        for request in requests {
            let error = #expect(throws: OriginError.self) {
                _ = try PreparedRequest(request, configuration: configuration)
            }
            #expect(error?.kind == .invalidRequest, "\(request.url)")
        }
    }
}
