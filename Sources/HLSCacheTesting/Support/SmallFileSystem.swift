import Foundation

/// A small tmpfs mounted for a test (a full disk that is really full); needs root and `CAP_SYS_ADMIN`.
public enum SmallFileSystem {
    /// Whether this machine lets the tests mount one.
    public static let isAvailable: Bool = {
        let probe = FileManager.default.temporaryDirectory.appendingPathComponent("hlscache-mount-probe-\(getpid())")
        try? FileManager.default.createDirectory(at: probe, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: probe) }
        guard run("/bin/mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", probe.path]) == 0 else { return false }
        return run("/bin/umount", [probe.path]) == 0
    }()

    /// Mounts a tmpfs of `megabytes` on a new directory, runs `body` with its path, and unmounts it.
    public static func withMounted<T>(megabytes: Int, _ body: (String) async throws -> T) async throws -> T {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hlscache-tmpfs-\(UUID())").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        guard run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", path]) == 0 else {
            throw SmallFileSystemError(path: path)
        }
        defer {
            _ = run("/bin/umount", ["-l", path])
            try? FileManager.default.removeItem(atPath: path)
        }
        return try await body(path)
    }

    /// Runs `mount` or `umount` to its end (through ``ChildProcess``, like every program the tests start).
    private static func run(_ executable: String, _ arguments: [String]) -> Int32 {
        guard let child = try? ChildProcess(executable, arguments) else { return -1 }
        return child.waitForExit(timeout: 60).status
    }
}

/// The tmpfs could not be mounted.
public struct SmallFileSystemError: Error, CustomStringConvertible {
    /// Where it was to be mounted.
    public let path: String

    /// Names the mount point and what is needed.
    public var description: String { "cannot mount a tmpfs on \(path): the tests need root with CAP_SYS_ADMIN" }
}
