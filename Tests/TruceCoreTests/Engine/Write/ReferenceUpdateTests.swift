import Foundation
import TestSupport
import Testing

@testable import TruceCore
@testable import TruceGit

/// Reference updates are compare-and-swap: every writer's journal append and conflict marker relies on it.
@Suite(.timeLimit(.minutes(10))) struct ReferenceUpdateTests {
    static let name = "refs/truce/test/swapped"

    /// A store with three commits (versions) to point a reference at, and a second handle on it, as another process would have.
    static func threeVersions() throws -> (TestStore, Repository, [ObjectID]) {
        let test = try TestStore()
        let ids = try (0..<3).map { try test.store.save(.text("\($0)\n"), to: "a.txt", device: "laptop").id.objectID }
        return (test, try Repository.openBare(at: test.path), ids)
    }

    /// Where the real git says `name` points, nil when it does not exist.
    static func target(of name: String, in test: TestStore) throws -> String? {
        let result = try git("-C", test.path, "rev-parse", "--verify", "--quiet", name)
        return result.status == 0 ? result.output.trimmingCharacters(in: .whitespacesAndNewlines) : nil
    }

    @Test func anUpdateExpectingAStaleValueFailsAndChangesNothing() throws {
        let (test, repository, ids) = try Self.threeVersions()
        try repository.updateReference(Self.name, to: ids[0], expecting: nil, message: "test")
        try repository.updateReference(Self.name, to: ids[1], expecting: ids[0], message: "test")
        // Another writer moved it from ids[0] to ids[1]: an update still expecting ids[0] lost the race.
        let stale = #expect(throws: GitError.self) {
            try repository.updateReference(Self.name, to: ids[2], expecting: ids[0], message: "test")
        }
        #expect(stale?.isConcurrentModification == true, "\(String(describing: stale))")
        #expect(try Self.target(of: Self.name, in: test) == ids[1].hex)
        #expect(try repository.reference(Self.name) == ids[1])
    }

    @Test func creatingAReferenceThatExistsFailsAndChangesNothing() throws {
        let (test, repository, ids) = try Self.threeVersions()
        try repository.updateReference(Self.name, to: ids[0], expecting: nil, message: "test")
        let existing = #expect(throws: GitError.self) {
            try repository.updateReference(Self.name, to: ids[1], expecting: nil, message: "test")
        }
        #expect(existing?.isConcurrentModification == true, "\(String(describing: existing))")
        #expect(try Self.target(of: Self.name, in: test) == ids[0].hex)
    }

    @Test func anUpdateExpectingAReferenceThatDoesNotExistFails() throws {
        let (test, repository, ids) = try Self.threeVersions()
        #expect(throws: GitError.self) {
            try repository.updateReference(Self.name, to: ids[1], expecting: ids[0], message: "test")
        }
        #expect(try Self.target(of: Self.name, in: test) == nil)
    }

    @Test func aDeletionExpectingAStaleValueFailsAndKeepsTheReference() throws {
        let (test, repository, ids) = try Self.threeVersions()
        try repository.updateReference(Self.name, to: ids[1], expecting: nil, message: "test")
        let stale = #expect(throws: GitError.self) { try repository.deleteReference(Self.name, expecting: ids[0]) }
        #expect(stale?.isConcurrentModification == true, "\(String(describing: stale))")
        #expect(try Self.target(of: Self.name, in: test) == ids[1].hex)
        #expect(try repository.deleteReference(Self.name, expecting: ids[1]))
        #expect(try Self.target(of: Self.name, in: test) == nil)
    }
}
