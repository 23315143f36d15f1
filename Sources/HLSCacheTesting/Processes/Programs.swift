import Foundation

/// `hlscache prefetch` run as a user runs it: the built binary, its exit status, standard output and error.
public enum PrefetchProcess {
    /// Runs `hlscache prefetch ARGUMENTS` to its end, off the concurrency pool.
    public static func run(_ arguments: [String]) async throws -> ChildProcess.Result {
        try await ChildProcess.run(ServerProcess.binary.path, ["prefetch"] + arguments)
    }

    /// Runs it and kills it with SIGKILL as soon as `killWhen` returns true (checked every 10 ms).
    public static func run(
        _ arguments: [String], killWhen: @escaping @Sendable () -> Bool
    ) async throws -> ChildProcess.Result {
        try await ChildProcess.run(ServerProcess.binary.path, ["prefetch"] + arguments, killWhen: killWhen)
    }
}

/// Runs ffmpeg, the player of the acceptance tests.
public enum FFmpeg {
    /// `ffmpeg -i URL -map 0 -c copy -f framemd5 -`: one line per packet with its checksum.
    public static func framemd5(_ url: String, extraArguments: [String] = []) async throws -> ChildProcess.Result {
        try await run(
            ["-nostdin", "-v", "error"] + extraArguments + [
                "-i", url, "-map", "0", "-c", "copy", "-f", "framemd5", "-",
            ])
    }

    /// Runs ffmpeg with `arguments`, killed after two minutes (the streams of the tests play in seconds).
    public static func run(_ arguments: [String]) async throws -> ChildProcess.Result {
        try await ChildProcess.run("/usr/bin/ffmpeg", arguments, timeout: 120)
    }
}

/// Runs GStreamer (`gst-launch-1.0`), the second player of the acceptance tests.
public enum GStreamer {
    /// Plays `uri` with `playbin` as fast as it can, video and audio decoded, each into a fake sink; the video sink
    /// prints every buffer it gets.
    ///
    /// Not `uridecodebin caps=video/x-raw ! fakesink`: with its audio left undecoded and unlinked, gst-launch 1.22
    /// hung now and then once the sink had every frame and the EOS (3 plays in 110 here, straight from a plain HTTP
    /// server), its pipeline never posting the EOS. `playbin`, which links every stream, did not in 500 (two at a time).
    /// - Parameters:
    ///   - uri: what to play.
    ///   - timeout: seconds before `gst-launch-1.0` is killed (status -1).
    /// - Returns: the video frames that reached the video sink, and the run.
    ///   - authority: a PEM file of a CA to trust besides the system's, for an `https` URI (see below).
    public static func videoFrames(
        _ uri: String, trusting authority: String? = nil, timeout: TimeInterval = 120
    ) async throws -> (frames: Int, run: ChildProcess.Result) {
        let arguments = [
            "-v", "playbin", "uri=\(uri)", "video-sink=fakesink name=video silent=false sync=false",
            "audio-sink=fakesink name=audio sync=false",
        ]
        let result: ChildProcess.Result
        if let authority {
            result = try await runTrusting(authority, arguments, timeout: timeout)
        } else {
            result = try await ChildProcess.run("/usr/bin/gst-launch-1.0", arguments, timeout: timeout)
        }
        return (result.output.components(separatedBy: "chain   ******* (video:sink)").count - 1, result)
    }

    /// Runs `gst-launch-1.0` trusting `authority` too. GStreamer's HTTP client (libsoup over GnuTLS) takes its trust
    /// from the system bundle only (its `ssl-ca-file` is not reachable inside `playbin`'s demuxers, and was refused
    /// here anyway), so the player runs in a mount namespace of its own (`unshare`) where that bundle is the system's
    /// with the test CA appended: the machine's own trust store is never touched.
    private static func runTrusting(
        _ authority: String, _ arguments: [String], timeout: TimeInterval
    ) async throws -> ChildProcess.Result {
        let system = "/etc/ssl/certs/ca-certificates.crt"
        let folder = ServerProcess.temporaryDirectory()
        let bundle = folder + "/ca-certificates.crt"
        let systemBundle = (try? Data(contentsOf: URL(fileURLWithPath: system))) ?? Data()
        try (systemBundle + Data(contentsOf: URL(fileURLWithPath: authority))).write(to: URL(fileURLWithPath: bundle))
        let script = #"mount --bind "$1" "$2" && shift 2 && exec /usr/bin/gst-launch-1.0 "$@""#
        return try await ChildProcess.run(
            "/usr/bin/unshare",
            ["--user", "--map-root-user", "--mount", "/bin/sh", "-c", script, "sh", bundle, system]
                + arguments, timeout: timeout)
    }
}
