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
        .library(name: "HLSPlaylist", targets: ["HLSPlaylist"]),
        .library(name: "OriginClient", targets: ["OriginClient"]),
        .library(name: "SegmentCache", targets: ["SegmentCache"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
    ],
    targets: [
        .target(name: "HLSPlaylist", swiftSettings: swiftSettings),
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"]), .brew(["curl"])]
        ),
        .target(name: "OriginClient", dependencies: ["CCurl"], swiftSettings: swiftSettings),
        .target(name: "SegmentCache", swiftSettings: swiftSettings),
        .executableTarget(name: "SegmentCacheWorker", dependencies: ["SegmentCache"], swiftSettings: swiftSettings),
        .executableTarget(
            name: "hlscache",
            dependencies: [
                "HLSPlaylist",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "hlscache-bench",
            dependencies: ["HLSPlaylist", "OriginClient", "SegmentCache"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HLSCacheCLITests",
            dependencies: ["hlscache"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "OriginClientTests",
            dependencies: [
                "OriginClient",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SegmentCacheTests",
            dependencies: ["SegmentCache"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HLSPlaylistTests",
            dependencies: ["HLSPlaylist"],
            swiftSettings: swiftSettings
        ),
    ]
)
