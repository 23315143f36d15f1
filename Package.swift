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
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2")
    ],
    targets: [
        .target(name: "HLSPlaylist", swiftSettings: swiftSettings),
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
            dependencies: ["HLSPlaylist"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HLSCacheCLITests",
            dependencies: ["hlscache"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HLSPlaylistTests",
            dependencies: ["HLSPlaylist"],
            swiftSettings: swiftSettings
        ),
    ]
)
