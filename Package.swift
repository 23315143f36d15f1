// swift-tools-version:6.1
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "hlscache",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .executable(name: "hlscache", targets: ["hlscache"]),
        .library(name: "ByteRanges", targets: ["ByteRanges"]),
        .library(name: "ManifestURLs", targets: ["ManifestURLs"]),
        .library(name: "HLSPlaylist", targets: ["HLSPlaylist"]),
        .library(name: "DASHManifest", targets: ["DASHManifest"]),
        .library(name: "OriginClient", targets: ["OriginClient"]),
        .library(name: "SegmentCache", targets: ["SegmentCache"]),
        .library(name: "OriginCache", targets: ["OriginCache"]),
        .library(name: "HLSCacheServer", targets: ["HLSCacheServer"]),
        .library(name: "HLSPrefetch", targets: ["HLSPrefetch"]),
        .library(name: "HLSCacheCommands", targets: ["HLSCacheCommands"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-http2", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    ],
    targets: [
        .target(name: "ByteRanges", swiftSettings: swiftSettings),
        // URL resolution (RFC 3986), the proxy and custom-scheme forms and the rewrite limits: one resolver for
        // every manifest kind.
        .target(name: "ManifestURLs", swiftSettings: swiftSettings),
        .target(name: "HLSPlaylist", dependencies: ["ByteRanges", "ManifestURLs"], swiftSettings: swiftSettings),
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"]), .brew(["curl"])]
        ),
        .target(name: "OriginClient", dependencies: ["ByteRanges", "CCurl"], swiftSettings: swiftSettings),
        .systemLibrary(
            name: "CLibXML2",
            pkgConfig: "libxml-2.0",
            providers: [.apt(["libxml2-dev"]), .brew(["libxml2"])]
        ),
        .target(name: "DASHManifest", dependencies: ["CLibXML2", "ManifestURLs"], swiftSettings: swiftSettings),
        // glibc's <malloc.h> (mallopt), part of libc6-dev: no package of its own.
        .systemLibrary(name: "CMalloc"),
        .target(name: "SegmentCache", dependencies: ["ByteRanges", "CMalloc"], swiftSettings: swiftSettings),
        .executableTarget(
            name: "SegmentCacheWorker", dependencies: ["HLSCacheTesting", "SegmentCache"], swiftSettings: swiftSettings),
        // glibc's posix_spawn_file_actions_addclosefrom_np and pipe2, for the test kit's process launcher.
        .systemLibrary(name: "CSpawn"),
        .systemLibrary(name: "CEpoll"),
        .target(
            name: "HLSCacheTesting",
            dependencies: [
                "ByteRanges", "CSpawn", "OriginClient", "SegmentCache",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // The tests' one trait (a target of its own: the kit is linked into programs that do not link Testing).
        .target(name: "HLSCacheTestTraits", swiftSettings: swiftSettings),
        .target(
            name: "OriginCache",
            dependencies: [
                "ByteRanges", "DASHManifest", "HLSPlaylist", "ManifestURLs", "OriginClient", "SegmentCache",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // What a request head says (the front's scanner, the decoder's heads, the closing rule): what the server
        // answers on, and what the request fuzzer reads without the server.
        .target(
            name: "RequestHeads",
            dependencies: [
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "HLSCacheServer",
            dependencies: [
                "ByteRanges", "DASHManifest", "HLSPlaylist", "ManifestURLs", "OriginClient", "SegmentCache", "OriginCache", "RequestHeads",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOExtras", package: "swift-nio-extras"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "HLSPrefetch",
            dependencies: [
                "ByteRanges", "DASHManifest", "HLSPlaylist", "ManifestURLs", "OriginClient", "SegmentCache", "OriginCache",
            ],
            swiftSettings: swiftSettings
        ),
        // The command line: every flag, its variable and its check, for the binary and for tests that run the server
        // in their own process.
        .target(
            name: "HLSCacheCommands",
            dependencies: [
                "DASHManifest", "HLSPlaylist", "HLSCacheServer", "HLSPrefetch", "ManifestURLs", "OriginCache", "OriginClient",
                "SegmentCache",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "hlscache",
            dependencies: ["HLSCacheCommands"],
            swiftSettings: swiftSettings
        ),
        // The fuzzers' one entry point (libFuzzer's driver, or a harness run over files).
        .target(name: "FuzzDriver", swiftSettings: swiftSettings),
        // The parsers' fuzzer: no server in it.
        .executableTarget(
            name: "hlscache-fuzz",
            dependencies: [
                "ByteRanges", "DASHManifest", "FuzzDriver", "HLSPlaylist", "ManifestURLs", "OriginCache", "RequestHeads",
                "SegmentCache",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // The server's request path, from a hostile head to the answer's plan.
        .executableTarget(
            name: "hlscache-fuzz-exchange",
            dependencies: [
                "FuzzDriver", "HLSCacheServer",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "hlscache-bench",
            dependencies: ["ByteRanges", "CEpoll", "DASHManifest", "HLSPlaylist", "ManifestURLs", "OriginClient", "SegmentCache"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HLSCacheCLITests",
            dependencies: ["HLSCacheTestTraits", "HLSCacheTesting", "hlscache"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "OriginClientTests",
            dependencies: [
                "ByteRanges", "HLSCacheTestTraits", "HLSCacheTesting", "OriginClient",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "OriginCacheTests",
            dependencies: [
                "ByteRanges", "HLSCacheTestTraits", "HLSCacheTesting", "HLSPlaylist", "OriginCache", "OriginClient", "SegmentCache",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SegmentCacheTests",
            dependencies: ["ByteRanges", "HLSCacheTestTraits", "HLSCacheTesting", "SegmentCache"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HLSCacheServerTests",
            dependencies: [
                "ByteRanges", "DASHManifest", "HLSCacheServer", "HLSCacheTestTraits", "HLSCacheTesting", "HLSPlaylist", "OriginCache",
                "OriginClient",
                "RequestHeads", "SegmentCache", "hlscache", "HLSCacheCommands",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HLSPrefetchTests",
            dependencies: [
                "ByteRanges", "HLSCacheTestTraits", "HLSCacheTesting", "HLSPrefetch", "HLSPlaylist", "hlscache",
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "DASHManifestTests",
            dependencies: ["DASHManifest", "HLSCacheTestTraits", "HLSCacheTesting", "ManifestURLs"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HLSPlaylistTests",
            dependencies: ["ByteRanges", "HLSCacheTestTraits", "HLSCacheTesting", "HLSPlaylist", "ManifestURLs"],
            swiftSettings: swiftSettings
        ),
    ]
)
