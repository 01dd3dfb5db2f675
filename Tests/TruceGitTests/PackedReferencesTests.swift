import Foundation
import Synchronization
import TestSupport
import Testing

@testable import TruceGit

/// A rewrite of `packed-refs` keeps every line it was not asked to change: lines other writers packed before it took
/// the lock, and (with `keepingExisting`) a line already there under a name it adds. `git for-each-ref` is the oracle.
@Suite(.timeLimit(.minutes(10))) struct PackedReferencesTests {
    final class Fixture {
        let directory = TemporaryDirectory("truce-packed-refs")
        var path: String { directory.file("repo.git") }
        let repository: Repository

        init() throws { repository = try Repository.createBare(at: directory.file("repo.git")) }

        /// A new blob's id: something real for a line to name.
        func object(_ text: String) throws -> ObjectID {
            let result = try git(["-C", path, "hash-object", "-w", "--stdin"], input: .text(text))
            return try #require(ObjectID(hex: result.output.trimmingCharacters(in: .whitespacesAndNewlines)), "\(result.errorOutput)")
        }

        /// Every reference as git reads it: name to target.
        func gitReferences() throws -> [String: String] {
            let result = try git(["-C", path, "for-each-ref", "--format=%(refname) %(objectname)"])
            try #require(result.status == 0, "\(result.errorOutput)")
            var references: [String: String] = [:]
            for line in result.output.split(separator: "\n") {
                let fields = line.split(separator: " ")
                references[String(fields[0])] = String(fields[1])
            }
            return references
        }
    }

    @Test func keepingExistingLeavesALineAnotherWriterPackedAsItIs() throws {
        let fixture = try Fixture()
        let (theirs, ours, other) = (try fixture.object("theirs"), try fixture.object("ours"), try fixture.object("other"))
        // Another writer packed refs/a first.
        try PackedReferences.update(in: fixture.repository.gitDirectory, adding: [("refs/a", theirs)], removing: [])
        try PackedReferences.update(
            in: fixture.repository.gitDirectory, adding: [("refs/a", ours), ("refs/b", other)], removing: [], keepingExisting: true)
        #expect(try fixture.gitReferences() == ["refs/a": theirs.hex, "refs/b": other.hex])
        // Without it, an addition replaces the line: the two modes differ exactly there.
        try PackedReferences.update(in: fixture.repository.gitDirectory, adding: [("refs/a", ours)], removing: [])
        #expect(try fixture.gitReferences() == ["refs/a": ours.hex, "refs/b": other.hex])
    }

    @Test func aRewriteKeepsWhatAnotherWriterPackedAfterThisHandleReadTheFile() throws {
        let fixture = try Fixture()
        let first = try fixture.object("first"), second = try fixture.object("second"), third = try fixture.object("third")
        try PackedReferences.update(in: fixture.repository.gitDirectory, adding: [("refs/truce/x/1", first)], removing: [])
        // This handle reads (and caches) the file as it is now.
        #expect(try fixture.repository.packedReferences().references(withPrefix: "refs/").map(\.name) == ["refs/truce/x/1"])
        // Meanwhile git itself packs two more refs.
        for (name, id) in [("refs/truce/x/2", second), ("refs/truce/y", third)] {
            #expect(try git(["-C", fixture.path, "update-ref", name, id.hex]).status == 0)
        }
        #expect(try git(["-C", fixture.path, "pack-refs", "--all", "--prune"]).status == 0)
        // A rewrite through the stale handle adds one line and removes another: git's lines stay.
        try PackedReferences.update(in: fixture.repository.gitDirectory, adding: [("refs/truce/z", first)], removing: ["refs/truce/x/1"])
        #expect(try fixture.gitReferences() == ["refs/truce/x/2": second.hex, "refs/truce/y": third.hex, "refs/truce/z": first.hex])
        // And deleting through the handle's own cached view removes only what it names.
        try fixture.repository.deleteReferences([("refs/truce/y", third)])
        #expect(try fixture.gitReferences() == ["refs/truce/x/2": second.hex, "refs/truce/z": first.hex])
    }

    @Test func writersPackingAtOnceEachKeepTheOthersLines() throws {
        let fixture = try Fixture()
        let target = try fixture.object("target")
        let writers = 4, linesEach = 25
        let gitDirectory = fixture.repository.gitDirectory
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: writers) { writer in
            for line in 0..<linesEach {
                // git's lock: a writer that finds it held waits, as `withLockRetries` does in the store.
                while true {
                    do {
                        try PackedReferences.update(in: gitDirectory, adding: [("refs/w\(writer)/\(line)", target)], removing: [])
                        break
                    } catch let error as GitError where error.isLocked {
                        usleep(200)
                    } catch {
                        failures.withLock { $0.append("\(writer)/\(line): \(error)") }
                        break
                    }
                }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty)
        let references = try fixture.gitReferences()
        #expect(references.count == writers * linesEach, "\(writers * linesEach - references.count) packed lines were lost")
        #expect(!FileManager.default.fileExists(atPath: gitDirectory + "packed-refs.lock"))
    }
}
