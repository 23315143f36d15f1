import Foundation
import HLSCacheTestTraits
import HLSCacheTesting
import Testing

/// Runs the built `hlscache` binary as a user would.
@Suite("hlscache command line", .sharedMachine)
struct CLITests {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs `hlscache ARGUMENTS` with `input` on standard input (the test kit's process runner).
    static func run(_ arguments: [String], input: String? = nil) async throws -> Result {
        let result = try await ChildProcess.run(ServerProcess.binary.path, arguments, input: input)
        return Result(status: result.status, stdout: result.output, stderr: result.errors)
    }

    @Test("rewrite prints the rewritten playlist from standard input")
    func rewriteFromStandardInput() async throws {
        let result = try await Self.run(
            ["rewrite", "-", "--url", "https://cdn.example.com/live/index.m3u8", "--base", "http://127.0.0.1:8080"],
            input: "#EXTM3U\n#EXTINF:4,\nseg1.ts\n")
        #expect(result.status == 0)
        #expect(result.stdout == "#EXTM3U\n#EXTINF:4,\nhttp://127.0.0.1:8080/o/https/cdn.example.com/live/seg1.ts\n")
    }

    @Test("rewrite --custom-scheme maps to hlscache-https URLs")
    func rewriteCustomScheme() async throws {
        let result = try await Self.run(
            ["rewrite", "--url", "https://cdn.example.com/live/index.m3u8", "--custom-scheme"],
            input: "#EXTM3U\n#EXTINF:4,\n/seg1.ts\n")
        #expect(result.stdout.hasSuffix("\nhlscache-https://cdn.example.com/seg1.ts\n"))
    }

    @Test("rewrite of invalid input prints one error line with its line number and exits 65")
    func rewriteInvalidInput() async throws {
        let result = try await Self.run(
            ["rewrite", "-", "--url", "https://h/x.m3u8", "--base", ""],
            input: "#EXTM3U\n#EXT-X-KEY:METHOD=AES-128,URI=\"k\n")
        #expect(result.status == 65)
        #expect(result.stdout.isEmpty)
        #expect(
            result.stderr
                == "error: malformed attribute list in EXT-X-KEY: unterminated quoted string at column 20 (line 2)\n"
        )
        let notPlaylist = try await Self.run(["rewrite", "--url", "https://h/x.m3u8"], input: "<html>")
        #expect(notPlaylist.status == 65)
        #expect(
            notPlaylist.stderr.hasPrefix("error: missing #EXTM3U header") && notPlaylist.stderr.hasSuffix("(line 1)\n"))
    }

    @Test(
        "rewrite --view filters offline as the server does, carries the view to media playlists, and refuses a bad one")
    func rewriteWithView() async throws {
        let master = try String(
            contentsOf: TestPaths.streams.appendingPathComponent("ts-multivariant/master.m3u8"), encoding: .utf8)
        let arguments = ["rewrite", "-", "--url", "https://cdn.example.com/master.m3u8"]
        let low = try await Self.run(arguments + ["--view", "hlscache.bandwidth=-100k"], input: master)
        #expect(low.status == 0 && !low.stdout.contains("hi/index.m3u8"), "\(low.stderr)")
        #expect(low.stdout.hasSuffix("/o/https/cdn.example.com/lo/index.m3u8?hlscache.bandwidth=-100000\n"))
        let nothing = try await Self.run(arguments + ["--view", "hlscache.bandwidth=-1k"], input: master)
        #expect(nothing.status == 65 && nothing.stderr.hasPrefix("error: the view leaves nothing to play"))
        let typo = try await Self.run(arguments + ["--view", "hlscache.bandwith=1"], input: master)
        #expect(typo.status == 64 && typo.stderr.contains("unknown view parameter hlscache.bandwith"), "\(typo.stderr)")
        let mpd = try String(
            contentsOf: TestPaths.streams.appendingPathComponent("dash-timeline/manifest.mpd"), encoding: .utf8)
        let dash = try await Self.run(
            ["rewrite", "-", "--url", "https://cdn.example.com/m.mpd", "--view", "hlscache.audio=fr"], input: mpd)
        #expect(dash.status == 0 && !dash.stdout.contains("contentType=\"audio\""), "\(dash.stderr)")
    }

    @Test("rewrite --parent supplies EXT-X-DEFINE:IMPORT values")
    func rewriteWithParent() async throws {
        let parent = FileManager.default.temporaryDirectory.appendingPathComponent("parent-\(UUID()).m3u8")
        try "#EXTM3U\n#EXT-X-DEFINE:NAME=\"auth\",VALUE=\"k=1\"\n#EXT-X-STREAM-INF:BANDWIDTH=1\nv.m3u8\n"
            .write(to: parent, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: parent) }
        let result = try await Self.run(
            ["rewrite", "--url", "https://h/v.m3u8", "--parent", parent.path],
            input: "#EXTM3U\n#EXT-X-DEFINE:IMPORT=\"auth\"\n#EXTINF:1,\ns.ts?{$auth}\n")
        #expect(result.stdout.hasSuffix("\n/o/https/h/s.ts?k=1\n"))
    }

    @Test("url prints one proxied URL per argument, in order")
    func urlPrintsProxiedURLs() async throws {
        let result = try await Self.run([
            "url", "--base", "http://127.0.0.1:8080", "https://cdn.example.com:8443/live/a.m3u8?t=1",
            "http://[::1]:8080/x",
        ])
        #expect(result.status == 0)
        #expect(
            result.stdout
                == "http://127.0.0.1:8080/o/https/cdn.example.com:8443/live/a.m3u8?t=1\nhttp://127.0.0.1:8080/o/http/[::1]:8080/x\n"
        )
        let bad = try await Self.run(["url", "ftp://x/y"])
        #expect(bad.status != 0 && bad.stderr.contains("not an absolute http(s) URL"))
    }

    @Test("rewrite detects an MPD and maps every URL place; --format dash says so; a bad MPD exits 65 with its line")
    func rewriteMPD() async throws {
        let mpd = """
            <?xml version="1.0"?>
            <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static"><Period><AdaptationSet>
            <SegmentTemplate media="/v/$Number$.m4s" initialization="init.mp4"/>
            <Representation id="a" bandwidth="1"/></AdaptationSet></Period></MPD>
            """
        for extra in [[], ["--format", "dash"]] {
            let result = try await Self.run(
                ["rewrite", "--url", "https://cdn.example.com/d/manifest.mpd", "--base", "http://127.0.0.1:8080"]
                    + extra, input: mpd)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains("media=\"http://127.0.0.1:8080/o/https/cdn.example.com/v/$Number$.m4s\""))
            #expect(
                result.stdout.contains("initialization=\"http://127.0.0.1:8080/o/https/cdn.example.com/d/init.mp4\""))
        }
        let bad = try await Self.run(["rewrite", "--url", "https://h/m.mpd", "--format", "dash"], input: "<MPD>\n<x>")
        #expect(bad.status == 65)
        #expect(bad.stderr.hasPrefix("error: not well-formed XML") && bad.stderr.hasSuffix("(line 2)\n"))
        // libxml2 prints encoding errors to stderr on its own; hlscache says one line, its own.
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("encoding-\(UUID()).mpd")
        try Data(
            "<?xml version=\"1.0\" encoding=\"SHIFT_JIS\"?>\n<MPD>".utf8 + [0xFF, 0xFE, 0, 0, 0, 0]
                + Data("</MPD>".utf8)
        )
        .write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let encoding = try await Self.run(["rewrite", file.path, "--url", "https://h/m.mpd"])
        #expect(encoding.status == 65)
        #expect(encoding.stderr.split(separator: "\n").count == 1, "\(encoding.stderr)")
    }
}
