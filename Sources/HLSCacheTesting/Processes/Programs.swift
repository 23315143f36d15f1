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
    public static func videoFrames(
        _ uri: String, timeout: TimeInterval = 120
    ) async throws -> (frames: Int, run: ChildProcess.Result) {
        let result = try await ChildProcess.run(
            "/usr/bin/gst-launch-1.0",
            [
                "-v", "playbin", "uri=\(uri)", "video-sink=fakesink name=video silent=false sync=false",
                "audio-sink=fakesink name=audio sync=false",
            ],
            timeout: timeout)
        return (result.output.components(separatedBy: "chain   ******* (video:sink)").count - 1, result)
    }
}
