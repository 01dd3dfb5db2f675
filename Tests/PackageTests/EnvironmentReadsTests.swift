import Foundation
import Testing

/// The library reads no environment variable, home directory or user of the process: what a sync may use from the
/// machine comes from the `SyncEnvironment` an app gives, and the command line reads the variables in one place
/// (`Invocation`). Read from the sources, as `LayeringTests` reads imports.
@Suite struct EnvironmentReadsTests {
    /// The library's modules: nothing under them may read the process's environment.
    static let library = ["Sources/TruceCore", "Sources/TruceGit", "Sources/TruceSaveLog"]

    /// The words that read the process's environment, its home or its user name, in Swift or C.
    static let reads: Set<String> = [
        "getenv", "secure_getenv", "environ", "NSHomeDirectory", "NSHomeDirectoryForUser", "NSUserName", "NSFullUserName",
    ]

    /// Where `source` reads the process's environment: `ProcessInfo.processInfo.environment` (however spaced), or
    /// one of `reads`; comments and strings do not count.
    static func readings(in source: SwiftSource) -> [String] {
        var found = source.lines.enumerated().flatMap { number, line in
            FacadeTests.words(line).filter { reads.contains(String($0)) }.map { "\(source.path):\(number + 1): \($0)" }
        }
        // A member chain may be split over lines: the whole code, without its spaces and line breaks.
        let squeezed = String(decoding: source.code.filter { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }, as: UTF8.self)
        for form in ["processInfo.environment", "ProcessInfo().environment"] where squeezed.contains(form) {
            found.append("\(source.path): \(form)")
        }
        return found
    }

    @Test func noLibraryFileReadsTheProcessEnvironment() throws {
        let sources = try Self.library.flatMap { try FacadeTests.sources(under: $0) }
        #expect(sources.count > 100, "the scan finds the library")
        let found = sources.flatMap(Self.readings)
        #expect(found.isEmpty, "the library reads the process's environment; take it from the SyncEnvironment handed down: \(found)")
    }

    @Test func theScanSeesEveryFormOfARead() {
        let planted = [
            "let home = ProcessInfo.processInfo.environment[\"HOME\"]", "let e = ProcessInfo.processInfo\n    .environment",
            "let p = getenv(\"SSH_AUTH_SOCK\")", "let h = NSHomeDirectory()", "var all = environ",
        ]
        for code in planted {
            #expect(!Self.readings(in: SwiftSource(path: "planted.swift", text: code)).isEmpty, "missed: \(code)")
        }
        // Words in comments and messages are not reads.
        let quiet = "// reads no getenv\nlet message = \"set HOME, not NSHomeDirectory()\"\n/// ProcessInfo.processInfo.environment\n"
        #expect(Self.readings(in: SwiftSource(path: "quiet.swift", text: quiet)).isEmpty)
    }

    @Test func theGitLayerCInReadsNoEnvironmentEither() throws {
        let base = LayeringTests.root.appendingPathComponent("Sources/CGitShim")
        let files = try #require(FileManager.default.enumerator(at: base, includingPropertiesForKeys: nil)?.allObjects as? [URL])
        let c = files.filter { ["c", "h"].contains($0.pathExtension) }
        #expect(c.count >= 5)
        for file in c {
            for (number, line) in try String(contentsOf: file, encoding: .utf8).split(separator: "\n").enumerated() {
                let code = line.drop { $0 == " " }
                guard !code.hasPrefix("*"), !code.hasPrefix("/*"), !code.hasPrefix("//") else { continue }
                let found = FacadeTests.words(line).filter { Self.reads.contains(String($0)) }
                #expect(found.isEmpty, "\(file.lastPathComponent):\(number + 1) reads the process's environment: \(line)")
            }
        }
    }
}
