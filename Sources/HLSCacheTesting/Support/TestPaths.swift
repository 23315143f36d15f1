import Foundation

/// Locations of the repository's fixtures and of the shared playlist corpus.
public enum TestPaths {
    /// The package root, found from this file's path.
    public static let packageRoot: URL = {
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { return url }
        }
        fatalError("Package.swift not found above \(#filePath)")
    }()

    /// `Fixtures/` in the package.
    public static var fixtures: URL { packageRoot.appendingPathComponent("Fixtures") }

    /// `Fixtures/streams`: the streams ``StreamOrigin`` serves.
    public static var streams: URL { fixtures.appendingPathComponent("streams") }

    /// `../shared/corpus` beside the project root, or `HLSCACHE_CORPUS`.
    public static var corpus: URL? {
        var candidates: [String] = []
        if let explicit = ProcessInfo.processInfo.environment["HLSCACHE_CORPUS"] { candidates.append(explicit) }
        candidates.append(packageRoot.deletingLastPathComponent().appendingPathComponent("shared/corpus").path)
        candidates.append("/work/shared/corpus")
        return candidates.first { FileManager.default.fileExists(atPath: $0 + "/MANIFEST.tsv") }
            .map { URL(fileURLWithPath: $0) }
    }

    /// Every `.m3u8` file of the corpus, sorted.
    public static func corpusFiles() throws -> [URL] {
        guard let corpus else { return [] }
        let enumerator = FileManager.default.enumerator(at: corpus, includingPropertiesForKeys: nil)
        var files: [URL] = []
        while let url = enumerator?.nextObject() as? URL {
            if url.pathExtension == "m3u8" { files.append(url) }
        }
        return files.sorted { $0.path < $1.path }
    }
}
