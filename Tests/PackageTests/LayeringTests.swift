import Foundation
import Testing

/// libgit2 is the git layer's alone, and the built-in resolvers see only TruceCore: SwiftPM does not hold modules to
/// that (a module a dependency imports can be imported too), so the sources are read for it.
@Suite(.timeLimit(.minutes(10))) struct LayeringTests {
    /// The package's root, three levels above this file (Tests/PackageTests/LayeringTests.swift).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Every module each Swift file under `folder` imports, by the file's path from the package root.
    static func imports(under folder: String) throws -> [(path: String, module: String)] {
        let base = root.appendingPathComponent(folder)
        let files = try #require(FileManager.default.enumerator(at: base, includingPropertiesForKeys: nil)?.allObjects as? [URL])
        var found: [(path: String, module: String)] = []
        for file in files where file.pathExtension == "swift" {
            let path = folder + "/" + file.path.dropFirst(base.path.count + 1)
            for line in try String(contentsOf: file, encoding: .utf8).split(separator: "\n") {
                // `import X`, `@testable import X`, `internal import X`, `@_exported import X`…
                let words = line.split(separator: " ").filter { !$0.hasPrefix("@") }
                guard let index = words.firstIndex(of: "import"), index <= 1, index + 1 < words.count else { continue }
                if index == 1, !["public", "package", "internal", "fileprivate", "private"].contains(words[0]) { continue }
                found.append((path, String(words[index + 1])))
            }
        }
        return found
    }

    @Test func onlyTheGitLayerAndItsTestsImportLibgit2() throws {
        let all = try ["Sources", "Plugins", "Tests"].flatMap { try Self.imports(under: $0) }
        let libgit2 = all.filter { ["CLibgit2", "CGitShim"].contains($0.module) }
        let outside = libgit2.filter { !$0.path.hasPrefix("Sources/TruceGit/") && !$0.path.hasPrefix("Tests/TruceGitTests/") }
        #expect(outside.map(\.path).isEmpty, "libgit2 imported outside the git layer: \(outside.map(\.path))")
        // The scan sees the imports that are allowed, so an empty `outside` is not a scan that found nothing.
        #expect(libgit2.filter { $0.path.hasPrefix("Sources/TruceGit/") }.count >= 10)
    }

    @Test func onlyTheCryptoLayerImportsLibsodium() throws {
        let all = try ["Sources", "Plugins", "Tests"].flatMap { try Self.imports(under: $0) }
        let sodium = all.filter { $0.module == "CSodium" }
        let outside = sodium.filter { !$0.path.hasPrefix("Sources/TruceCrypto/") }
        #expect(outside.map(\.path).isEmpty, "libsodium imported outside the crypto layer: \(outside.map(\.path))")
        #expect(sodium.count >= 5)
    }

    @Test func builtInResolversImportTruceCoreAndTheSystemOnly() throws {
        let imports = try Self.imports(under: "Plugins")
        #expect(imports.contains { $0.module == "TruceCore" })
        let allowed: Set = ["TruceCore", "Foundation", "Synchronization", "Dispatch", "Glibc", "Darwin"]
        let others = imports.filter { !allowed.contains($0.module) }
        #expect(others.isEmpty, "a built-in resolver imports more than a third-party one could: \(others)")
    }

    @Test func theSaveLogHasNoGitInIt() throws {
        let imports = try Self.imports(under: "Sources/TruceSaveLog")
        #expect(imports.contains { $0.module == "Foundation" })
        let allowed: Set = ["Foundation", "Synchronization", "Dispatch", "Glibc", "Darwin"]
        let others = imports.filter { !allowed.contains($0.module) }
        #expect(others.isEmpty, "the save log imports more than the system: \(others)")
    }
}
