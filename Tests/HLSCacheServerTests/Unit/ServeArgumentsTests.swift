import Foundation
import HLSCacheServer
import HLSCacheTestTraits
import HLSCacheTesting
import OriginCache
import OriginClient
import Testing

@testable import HLSCacheCommands

/// `serve`'s arguments as the command line parses them (``ServeInvocation``): the fill rules land in the one fill
/// configuration, read-ahead's old spellings still work with a warning, and bad values are refused with the flag named.
@Suite("Serve arguments", .sharedMachine)
struct ServeArgumentsTests {
    @Test("the fill flags set the fill configuration the server and prefetch share")
    func fillFlagsSetTheFillConfiguration() throws {
        let invocation = try ServeInvocation(arguments: [
            "--cache-dir", "/tmp/x", "--max-cache-size", "2GB", "--max-object-size", "1MiB", "--negative-ttl", "3",
            "--vod-playlist-ttl", "7", "--multivariant-playlist-ttl", "5", "--manifest-timeout", "2",
            "--origin-timeout", "4", "--max-fills", "9", "--allow-host", "cdn.example",
        ])
        let fill = invocation.configuration.fill
        #expect(fill.cacheDirectory == "/tmp/x")
        #expect(fill.maxCacheBytes == 2_000_000_000)
        #expect(fill.maxObjectBytes == 1 << 20)
        #expect(fill.negativeTTL == .seconds(3))
        #expect(fill.vodPlaylistTTL == .seconds(7))
        #expect(fill.multivariantPlaylistTTL == .seconds(5))
        #expect(fill.manifestTimeout == .seconds(2))
        #expect(fill.originTimeout == .seconds(4))
        #expect(fill.maxFills == 9)
        #expect(fill.addressPolicy.allowedHosts == ["cdn.example"])
        #expect(fill.nodeName?.hasPrefix("hlscache-") == true)
        #expect(invocation.warnings.isEmpty)
    }

    @Test("--http2-max-streams and --parent-ca land in the configuration")
    func http2StreamsAndParentAuthority() throws {
        let folder = ServerProcess.temporaryDirectory()
        let authority = folder + "/ca.pem"
        try "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n".write(
            toFile: authority, atomically: true, encoding: .utf8)
        let configuration = try ServeInvocation(arguments: [
            "--http2-max-streams", "1000", "--parent", "https://10.0.0.5:8443", "--parent-ca", authority,
        ]).configuration
        #expect(configuration.http2MaxStreams == 1000)
        #expect(configuration.fill.parent?.certificateAuthority == authority)
        #expect(try ServeInvocation(arguments: []).configuration.http2MaxStreams == 100)
    }

    @Test("reverse mode lists the origin's host and port in the server's policy, not in the shared fill rules")
    func reverseOriginIsListedOnce() throws {
        let configuration = try ServeInvocation(arguments: ["--origin", "https://origin.example/base"]).configuration
        #expect(configuration.fill.addressPolicy.allowedHosts == ["*"])
        #expect(configuration.originCache.addressPolicy.allowedHosts == ["*", "origin.example:443"])
    }

    @Test("--read-ahead sets the read-ahead; --prefetch, its old name, still does, with a warning naming the new one")
    func readAheadAndItsOldName() throws {
        let current = try ServeInvocation(arguments: ["--read-ahead", "5", "--read-ahead-concurrency", "2"])
        #expect(current.configuration.readAheadCount == 5)
        #expect(current.configuration.readAheadConcurrency == 2)
        #expect(current.warnings.isEmpty)
        let old = try ServeInvocation(arguments: ["--prefetch", "3", "--prefetch-concurrency", "6"])
        #expect(old.configuration.readAheadCount == 3)
        #expect(old.configuration.readAheadConcurrency == 6)
        #expect(old.warnings.count == 2)
        #expect(old.warnings.allSatisfy { $0.contains("deprecated") })
        #expect(old.warnings[0].contains("--read-ahead") && old.warnings[0].contains("HLSCACHE_READ_AHEAD"))
        let both = try ServeInvocation(arguments: ["--prefetch", "3", "--read-ahead", "1"])
        #expect(both.configuration.readAheadCount == 1)
        #expect(try ServeInvocation(arguments: []).configuration.readAheadCount == 2)
    }

    @Test("bad values are refused with the flag named")
    func badValuesNameTheFlag() {
        for (arguments, flag) in [
            (["--negative-ttl", "-1"], "--negative-ttl"), (["--max-object-size", "lots"], "--max-object-size"),
            (["--manifest-timeout", "0"], "--manifest-timeout"), (["--read-ahead", "-1"], "--read-ahead"),
            (["--origin", "ftp://x"], "--origin"), (["--http2-max-streams", "0"], "--http2-max-streams"),
            (["--http2-max-streams", "10001"], "--http2-max-streams"),
            (["--parent-ca", "/etc/hostname"], "--parent-ca"),
            (["--parent", "http://10.0.0.5:8080", "--parent-ca", "/etc/hostname"], "--parent-ca"),
            (["--parent", "https://10.0.0.5:8443", "--parent-ca", "/etc/hostname"], "--parent-ca"),
        ] {
            #expect {
                _ = try ServeInvocation(arguments: arguments)
            } throws: { error in
                (error as? ServeArgumentsError)?.message.contains(flag) == true
            }
        }
    }

    @Test("a server started with --prefetch logs that it is deprecated, and reads ahead as told")
    func deprecatedSpellingIsLogged() async throws {
        try await withServer(arguments: ["--prefetch", "0"]) { server, _ in
            #expect(server.log.contains("deprecated option"), "\(server.log)")
            #expect(server.log.contains("use --read-ahead"))
        }
    }

    @Test("an old spelling on the command line wins over the new name's variable, as the command line wins over any")
    func oldSpellingOnTheCommandLineWinsOverTheVariable() throws {
        let given = ["--prefetch", "0"]
        let merged = EnvironmentOption.merged(
            given, options: ServeCommand.environmentOptions(given: given),
            environment: ["HLSCACHE_READ_AHEAD": "4", "HLSCACHE_READ_AHEAD_CONCURRENCY": "3"])
        let invocation = try ServeInvocation(arguments: merged)
        #expect(invocation.configuration.readAheadCount == 0)
        #expect(invocation.configuration.readAheadConcurrency == 3)
        let newName = ["--read-ahead", "5"]
        let fromOld = EnvironmentOption.merged(
            newName, options: ServeCommand.environmentOptions(given: newName),
            environment: ["HLSCACHE_PREFETCH": "1"])
        #expect(try ServeInvocation(arguments: fromOld).configuration.readAheadCount == 5)
        #expect(try ServeInvocation(arguments: fromOld).warnings.isEmpty)
    }
}
