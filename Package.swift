// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Truce",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Truce", targets: ["Truce"]),
        .library(name: "TruceCommandLine", targets: ["TruceCommandLine"]),
        .library(name: "TruceTesting", targets: ["TruceTesting"]),
        .executable(name: "truce", targets: ["TruceCLI"]),
        .executable(name: "truce-bench", targets: ["TruceBench"]),
    ],
    targets: [
        // libgit2 as Debian ships it (libgit2-dev 1.5.1), found through pkg-config.
        .systemLibrary(
            name: "CLibgit2",
            path: "Sources/CLibgit2",
            pkgConfig: "libgit2",
            providers: [.apt(["libgit2-dev"]), .brew(["libgit2"])]
        ),
        // What the git layer needs in C: one-line wrappers for libgit2's variadic options (fsync, cache and window
        // limits, no outside config, the CA file), object database backends (the loose-object guard, which inflates
        // loose objects with zlib itself; reads past libgit2's cache), the fetch negotiation's known "have" lines,
        // zlib's deflate and inflate streams and CRC-32 for packs, syncfs, and returning freed memory to the system.
        .target(name: "CGitShim", dependencies: ["CLibgit2"], path: "Sources/CGitShim", linkerSettings: [.linkedLibrary("z")]),
        // The git layer: the only Swift module that calls libgit2, all of it `package` access, so apps never see it. Its
        // README.md lists the files that re-implement a git format.
        .target(name: "TruceGit", dependencies: ["CLibgit2", "CGitShim"], path: "Sources/TruceGit", exclude: ["README.md"]),
        // libsodium as Debian ships it (libsodium-dev 1.0.18): the encrypted hub's cryptography, never written here.
        .systemLibrary(
            name: "CSodium",
            path: "Sources/CSodium",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"]), .brew(["libsodium"])]
        ),
        // libsodium's primitives as Swift values, all of it `package` access: the only module that calls libsodium.
        .target(name: "TruceCrypto", dependencies: ["CSodium"], path: "Sources/TruceCrypto"),
        // The save log: a durable append-only log of opaque records with group commit. Nothing of git in it.
        .target(name: "TruceSaveLog", path: "Sources/TruceSaveLog"),
        // The store an app uses, over the git layer and the save log it imports internally: no libgit2-level type is public.
        .target(name: "TruceCore", dependencies: ["TruceGit", "TruceSaveLog", "TruceCrypto"], path: "Sources/TruceCore"),
        // Built-in resolvers: each a module on TruceCore's public API only, as a third-party one would be.
        .target(name: "OverwriteWithCurrent", dependencies: ["TruceCore"], path: "Plugins/OverwriteWithCurrent"),
        .target(name: "ThreeWayMerge", dependencies: ["TruceCore"], path: "Plugins/ThreeWayMerge"),
        .target(name: "ListConflicts", dependencies: ["TruceCore"], path: "Plugins/ListConflicts"),
        .target(name: "UnionMerge", dependencies: ["TruceCore"], path: "Plugins/UnionMerge"),
        .target(name: "LastWriterWins", dependencies: ["TruceCore"], path: "Plugins/LastWriterWins"),
        .target(name: "Deduplicate", dependencies: ["TruceCore"], path: "Plugins/Deduplicate"),
        .target(name: "ExternalDriver", dependencies: ["TruceCore"], path: "Plugins/ExternalDriver"),
        .target(name: "StructuredMerge", dependencies: ["TruceCore"], path: "Plugins/StructuredMerge"),
        .target(
            name: "Truce",
            dependencies: [
                "TruceCore", "OverwriteWithCurrent", "ThreeWayMerge", "ListConflicts", "UnionMerge", "LastWriterWins",
                "Deduplicate", "ExternalDriver", "StructuredMerge",
            ],
            path: "Sources/Truce"
        ),
        // The whole command line as a library, so an app can ship its own `truce` with its own resolvers;
        // the `truce` executable is its entry point and nothing else.
        .target(name: "TruceCommandLine", dependencies: ["Truce", "CAllocator"], path: "Sources/TruceCommandLine"),
        // The process's allocator setting that the `truce` tool makes at its start (`CommandLineTool.main`).
        .target(name: "CAllocator", path: "Sources/CAllocator"),
        .executableTarget(name: "TruceCLI", dependencies: ["TruceCommandLine"], path: "Sources/TruceCLI"),
        // Conflicts in memory and fabricated stores on disk, so a resolver is unit-tested in a few lines; TruceCore's public API only.
        .target(name: "TruceTesting", dependencies: ["TruceCore"], path: "Sources/TruceTesting"),
        // The benchmark, and its "limit" baseline: libgit2's merge called directly from C, nothing around it.
        .target(name: "CBenchLimit", dependencies: ["CLibgit2"], path: "Sources/CBenchLimit"),
        // SQLite as Debian ships it (libsqlite3-dev), the durable saves' peer: linked into the benchmark only.
        .systemLibrary(
            name: "CSQLite",
            path: "Sources/CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        // What the tests and the benchmark run against: seeded workloads, and real git servers on 127.0.0.1 stopped by pid.
        .target(name: "Testbed", path: "Sources/Testbed"),
        // Its README.md holds the figures, beside the code that measures them.
        .executableTarget(
            name: "TruceBench", dependencies: ["Truce", "TruceGit", "TruceSaveLog", "CBenchLimit", "CSQLite", "Testbed"], path: "Sources/TruceBench",
            exclude: ["README.md"]),

        // Conflicts come from TruceTesting's fixtures, as an app's tests make them.
        .target(name: "TestSupport", dependencies: ["Truce", "Testbed", "TruceTesting"], path: "Tests/TestSupport"),
        // Interposes fsync and fdatasync to count them (libgit2's calls too): linked into the tests only, never the library.
        .target(name: "CFsyncCounter", path: "Tests/CFsyncCounter"),
        // Interposes access to count libgit2's looks for loose object files: linked into the tests only.
        .target(name: "CAccessCounter", path: "Tests/CAccessCounter"),
        .testTarget(name: "TruceGitTests", dependencies: ["TruceGit", "TestSupport", "CAccessCounter"], path: "Tests/TruceGitTests"),
        // Rules about the package as a whole, read from its sources: which module may import which.
        .testTarget(name: "PackageTests", path: "Tests/PackageTests"),
        .testTarget(name: "TruceCryptoTests", dependencies: ["TruceCrypto"], path: "Tests/TruceCryptoTests"),
        .testTarget(name: "TruceSaveLogTests", dependencies: ["TruceSaveLog", "TestSupport"], path: "Tests/TruceSaveLogTests"),
        .testTarget(
            name: "TruceCoreTests", dependencies: ["TruceCore", "TruceGit", "TruceSaveLog", "TestSupport", "CFsyncCounter"],
            path: "Tests/TruceCoreTests"),
        .testTarget(name: "PluginTests", dependencies: ["Truce", "TruceTesting", "TestSupport"], path: "Tests/PluginTests"),
        .testTarget(name: "CLITests", dependencies: ["TruceCommandLine", "TestSupport"], path: "Tests/CLITests"),
        .testTarget(
            name: "TruceTestingTests", dependencies: ["TruceTesting", "ThreeWayMerge", "LastWriterWins", "TestSupport"],
            path: "Tests/TruceTestingTests"),
    ],
    swiftLanguageModes: [.v6]
)
