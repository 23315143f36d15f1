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
    /// Plays `uri` with `uridecodebin` into a fake sink, decoding video only, as fast as it can.
    /// - Parameters:
    ///   - uri: what to play.
    ///   - timeout: seconds before `gst-launch-1.0` is killed (status -1).
    /// - Returns: the video frames that reached the sink, and the run.
    public static func videoFrames(
        _ uri: String, timeout: TimeInterval = 120
    ) async throws -> (frames: Int, run: ChildProcess.Result) {
        let result = try await ChildProcess.run(
            "/usr/bin/gst-launch-1.0",
            ["-v", "uridecodebin", "uri=\(uri)", "caps=video/x-raw", "!", "fakesink", "silent=false", "sync=false"],
            timeout: timeout)
        return (result.output.components(separatedBy: "chain").count - 1, result)
    }
}
