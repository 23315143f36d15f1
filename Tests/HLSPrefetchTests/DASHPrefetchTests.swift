import Foundation
import HLSCacheTestTraits
import HLSCacheTesting
import HTTPTypes
import Testing

/// `hlscache prefetch` of DASH MPDs: a static MPD warmed into a cache directory plays through a server with the
/// origin stopped; what prefetch does not do yet, it says.
@Suite("DASH prefetch", .sharedMachine)
struct DASHPrefetchTests {
    @Test("static MPDs prefetched into a cache dir play through a server on that dir with the origin stopped")
    func warmedCachePlaysWithoutTheOrigin() async throws {
        let origin = StreamOrigin()
        try await origin.start()
        let packages = ["dash-timeline", "dash-list", "dash-ondemand"]
        var direct: [String: String] = [:]
        for package in packages {
            direct[package] = try await FFmpeg.framemd5(origin.url("/\(package)/manifest.mpd")).output
        }
        let directory = ServerProcess.temporaryDirectory()
        for package in packages {
            let result = try await PrefetchProcess.run([
                origin.url("/\(package)/manifest.mpd"), "--cache-dir", directory, "--allow-private-networks", "--json",
            ])
            #expect(result.status == 0, "prefetch \(package): \(result.errors)")
            let summary = try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any]
            #expect(summary?["failed"] as? Int == 0)
            #expect((summary?["fetched"] as? Int ?? 0) >= 3, "\(result.output)")
        }
        origin.stop()

        let server = try await ServerProcess.start(cacheDirectory: directory, arguments: ["--allow-private-networks"])
        for package in packages {
            let played = try await FFmpeg.framemd5(server.proxied(origin.url("/\(package)/manifest.mpd")))
            #expect(played.output.split(separator: "\n").count > 100, "\(package): \(played.errors)")
            #expect(played.output == direct[package], "\(package): frames differ from the origin's")
        }
        let log = try await server.settledLog()
        #expect(!log.contains("cache=MISS"), "the server missed:\n\(log)")
        await server.stop()
    }

    @Test("--variants worst keeps the lowest-bandwidth Representation of each AdaptationSet")
    func variantSelection() async throws {
        try await StreamOrigin.withRunning { origin in
            let result = try await PrefetchProcess.run([
                origin.url("/dash-timeline/manifest.mpd"), "--cache-dir", ServerProcess.temporaryDirectory(),
                "--allow-private-networks", "--variants", "worst", "--json",
            ])
            #expect(result.status == 0, "\(result.errors)")
            // One video and one audio Representation each way: 2 initializations and 3 + 4 segments.
            let summary = try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any]
            #expect(summary?["objects"] as? Int == 9, "\(result.output)")
        }
    }

    @Test("--output writes a folder that ffmpeg plays offline with the origin's frames, nothing outside it")
    func offlineFolder() async throws {
        let origin = StreamOrigin()
        try await origin.start()
        // Not dash-ranges: ffmpeg 5.1 spins on a local SegmentList of byte ranges (its own fixture folder played
        // from disk does too), so that package is checked through serve only.
        let packages = ["dash-timeline", "dash-number", "dash-list", "dash-ondemand"]
        var direct: [String: String] = [:]
        let root = ServerProcess.temporaryDirectory()
        for package in packages {
            direct[package] = try await FFmpeg.framemd5(origin.url("/\(package)/manifest.mpd")).output
            let result = try await PrefetchProcess.run([
                origin.url("/\(package)/manifest.mpd"), "--output", root + "/" + package, "--allow-private-networks",
            ])
            #expect(result.status == 0, "\(package): \(result.errors)")
        }
        origin.stop()
        for package in packages {
            let played = try await FFmpeg.framemd5(root + "/" + package + "/manifest.mpd")
            #expect(played.output.split(separator: "\n").count > 100, "\(package) offline: \(played.errors)")
            #expect(played.output == direct[package], "\(package): offline frames differ from the origin's")
        }
        let written = FileManager.default.enumerator(atPath: root)?.allObjects as? [String] ?? []
        #expect(written.allSatisfy { !$0.contains("..") })
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: root)) == Set(packages))
    }

    @Test("a dynamic MPD is refused with a reason, before anything is fetched")
    func dynamicSaysSo() async throws {
        try await StreamOrigin.withRunning { origin in
            origin.set(
                "/live.mpd",
                .answer(
                    "<MPD xmlns=\"urn:mpeg:dash:schema:mpd:2011\" type=\"dynamic\" minimumUpdatePeriod=\"PT2S\"/>",
                    headers: [.contentType: "application/dash+xml"]))
            let live = try await PrefetchProcess.run([
                origin.url("/live.mpd"), "--cache-dir", ServerProcess.temporaryDirectory(), "--allow-private-networks",
            ])
            #expect(live.status == 2)
            #expect(live.errors.contains("dynamic (live) MPD"))
        }
    }
}
