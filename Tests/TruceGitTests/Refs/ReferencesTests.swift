import Foundation
import TestSupport
import Testbed
import Testing

@testable import TruceGit

/// Reading references (`References.swift`), with `git for-each-ref` as the oracle.
@Suite(.timeLimit(.minutes(10))) struct ReferencesTests {
    /// Folders read together (one listing of loose files, one reading of packed-refs) give what each gives alone and
    /// what git lists there: a loose file over a packed line of one name, a lock file left out, a folder without any.
    /// A damaged loose file is an error in a folder asked for, and not read in another.
    @Test func foldersReadTogetherGiveWhatEachGivesAloneAndGitLists() throws {
        let fixture = try PackedReferencesTests.Fixture()
        let (a, b, c) = (try fixture.object("a"), try fixture.object("b"), try fixture.object("c"))
        func update(_ name: String, _ target: ObjectID) throws {
            #expect(try git(["-C", fixture.path, "update-ref", name, target.hex]).status == 0)
        }
        for (name, target) in [("refs/h/aa/x/1", a), ("refs/h/aa/x/2", b), ("refs/h/bb/y/1", a), ("refs/h/cc/z/1", c)] { try update(name, target) }
        #expect(try git(["-C", fixture.path, "pack-refs", "--all", "--prune"]).status == 0)
        for (name, target) in [("refs/h/aa/x/2", c), ("refs/h/bb/y/3", b), ("refs/h/dd/w/1", a)] { try update(name, target) }
        try Data("\(a.hex)\n".utf8).write(to: URL(fileURLWithPath: fixture.path + "/refs/h/aa/x/4.lock"))

        let directories = ["refs/h/aa/x/", "refs/h/bb/y/", "refs/h/cc/z/", "refs/h/ee/none/"]
        let together = try fixture.repository.references(underEach: directories, listingLooseUnder: "refs/h/")
        for (directory, found) in zip(directories, together) {
            let listed = Dictionary(found.map { ($0.name, $0.target.hex) }, uniquingKeysWith: { first, _ in first })
            #expect(listed.count == found.count, "one reference of a name in \(directory)")
            let alone = try fixture.repository.references(under: directory)
            #expect(listed == Dictionary(uniqueKeysWithValues: alone.map { ($0.name, $0.target.hex) }), "\(directory)")
            #expect(listed == (try fixture.gitReferences()).filter { $0.key.hasPrefix(directory) }, "\(directory)")
        }
        #expect(together.map(\.count) == [2, 2, 1, 0])
        // Folders at any depth below the root, one inside another, one asked for twice.
        let nested = ["refs/h/", "refs/h/aa/", "refs/h/bb/y/", "refs/h/aa/"]
        for (directory, found) in zip(nested, try fixture.repository.references(underEach: nested, listingLooseUnder: "refs/h/")) {
            let listed = Set(found.map { "\($0.name) \($0.target.hex)" })
            #expect(listed == Set((try fixture.gitReferences()).filter { $0.key.hasPrefix(directory) }.map { "\($0) \($1)" }), "\(directory)")
        }

        try Data("damaged\n".utf8).write(to: URL(fileURLWithPath: fixture.path + "/refs/h/dd/w/1"))
        #expect(try fixture.repository.references(underEach: directories, listingLooseUnder: "refs/h/").map(\.count) == [2, 2, 1, 0])
        try Data("damaged\n".utf8).write(to: URL(fileURLWithPath: fixture.path + "/refs/h/bb/y/3"))
        #expect(throws: GitError.self) { try fixture.repository.references(underEach: directories, listingLooseUnder: "refs/h/") }
    }

    /// The targets alone of a folder's references (what a snapshot manifest lists) are those git lists there: a loose
    /// file's over the packed line of its name, packed lines of other folders and lock files left out.
    @Test func aFoldersTargetsAloneAreWhatGitLists() throws {
        let fixture = try PackedReferencesTests.Fixture()
        let (a, b, c) = (try fixture.object("a"), try fixture.object("b"), try fixture.object("c"))
        func update(_ name: String, _ target: ObjectID) throws {
            #expect(try git(["-C", fixture.path, "update-ref", name, target.hex]).status == 0)
        }
        for (name, target) in [("refs/h/aa/x/1", a), ("refs/h/aa/x/2", b), ("refs/g/1", c)] { try update(name, target) }
        #expect(try git(["-C", fixture.path, "pack-refs", "--all", "--prune"]).status == 0)
        #expect(try fixture.repository.referenceTargets(under: "refs/h/").sorted() == [a, b].sorted())
        for (name, target) in [("refs/h/aa/x/2", c), ("refs/h/bb/y/3", a)] { try update(name, target) }
        try Data("\(b.hex)\n".utf8).write(to: URL(fileURLWithPath: fixture.path + "/refs/h/aa/x/4.lock"))
        let expected = try fixture.gitReferences().filter { $0.key.hasPrefix("refs/h/") }.values.sorted()
        #expect(try fixture.repository.referenceTargets(under: "refs/h/").map(\.hex).sorted() == expected)
        #expect(expected == [a, a, c].map(\.hex).sorted())
    }
}
