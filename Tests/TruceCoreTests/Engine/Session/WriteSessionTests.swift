import Foundation
import TestSupport
import Testing
import TruceGit

@testable import TruceCore

/// A write session lists the document it writes once: what it publishes is worked out from that listing, not read
/// back, unless another writer published beside it meanwhile.
@Suite(.timeLimit(.minutes(10))) struct WriteSessionTests {
    /// A store opened for watching, straight into git or through its save log.
    static func store(_ test: TestStore, saveLog: Bool) throws -> DocumentStore {
        try DocumentStore.open(at: test.path, savesThroughLog: saveLog, instrumentation: StoreInstrumentation())
    }

    /// The listings of one document's heads that `body` makes.
    static func listings(_ store: DocumentStore, _ body: () throws -> Void) rethrows -> Int {
        let before = store.instrumentation.documentHeadListings
        try body()
        return store.instrumentation.documentHeadListings - before
    }

    /// Straight into git, each save lists its document once. Through the save log, the first save of a document lists
    /// it and the log's overlay knows it from then on: the later ones list nothing.
    @Test(arguments: [false, true]) func aSaveListsItsDocumentsHeadsOnce(throughTheLog: Bool) throws {
        let test = try TestStore()
        let store = try Self.store(test, saveLog: throughTheLog)
        let key: DocumentKey = "notes/todo.md"
        let later = throughTheLog ? 0 : 1
        // A first save, a save on it, a save beside it (a conflict), a deletion of the current version.
        var first: SaveResult?
        #expect(try Self.listings(store) { first = try store.save(.text("a\n"), to: key, device: "laptop") } == 1)
        let base = try #require(first)
        #expect(try Self.listings(store) { try store.save(.text("b\n"), to: key, device: "laptop") } == later)
        var sibling: SaveResult?
        #expect(try Self.listings(store) { sibling = try store.save(.text("c\n"), to: key, device: "phone", base: base.id) } == later)
        #expect(sibling?.state == .inConflict)
        var deleted: SaveResult?
        #expect(try Self.listings(store) { deleted = try store.delete(key, device: "laptop") } == later)
        #expect(deleted?.state == .inConflict, "a deletion of the current version leaves the other head")
        // What the saves returned is what a reader of git finds.
        try store.checkpoint()
        let reread = try DocumentStore.open(at: test.path).versions(of: key)
        #expect(reread.state == .inConflict && reread.allHeads.count == 2)
        #expect(try test.git("fsck", "--strict", "--no-dangling").isEmpty)
    }

    /// The state a save returns, worked out from its own listing, is the state git shows: settled, in conflict, and
    /// heads of identical content counted as one.
    @Test func theStateASaveWorksOutIsTheOneReadBack() throws {
        let test = try TestStore()
        let store = try Self.store(test, saveLog: false)
        let key: DocumentKey = "a.txt"
        let base = try store.save(.text("0\n"), to: key, device: "laptop")
        let one = try store.save(.text("1\n"), to: key, device: "laptop", base: base.id)
        let same = try store.save(.text("1\n"), to: key, device: "phone", base: base.id)
        #expect(one.state == .settled && same.state == .settled, "identical content is no conflict")
        let other = try store.save(.text("2\n"), to: key, device: "tablet", base: base.id)
        #expect(other.state == .inConflict)
        let after = try store.save(.text("3\n"), to: key, device: "laptop", base: other.id)
        let read = try DocumentStore.open(at: test.path).versions(of: key)
        #expect(after.state == read.state)
        #expect(Set(read.allHeads.map(\.id)) == [one.id, same.id, after.id])
        #expect(after.version.isConflict == read.conflicts.contains { $0.id == after.id })
        // The marker `status` reads follows: in conflict, listed.
        #expect(try DocumentStore.open(at: test.path).documentsInConflict().map(\.key) == [key])
    }

    /// Another writer publishing a head of the same document between the listing and the publishing is seen: the
    /// document is read again, and the save reports the conflict.
    @Test func aHeadPublishedMeanwhileIsSeenAndTheDocumentReadAgain() throws {
        let test = try TestStore()
        let store = try Self.store(test, saveLog: false)
        let key: DocumentKey = "race.txt"
        // Saved in a batch, its head is a line of packed-refs, which a save leaves in place: the other writer's save
        // deletes nothing this writer's listing reads, and so comes after the listing, not into it.
        let batch = (0..<9).map { BatchSave(key: $0 == 0 ? key : DocumentKey(stringLiteral: "d\($0).txt"), content: .text("0\n"), device: "laptop") }
        let base = try store.saveBatchOnCallingThread(batch)[0]
        #expect(try test.git("show-ref").contains(base.hex))
        let other = try DocumentStore.open(at: test.path, savesThroughLog: false, instrumentation: StoreInstrumentation())
        // The other writer publishes right after this writer listed the document's heads.
        let raced = RacedOnce()
        store.instrumentation.afterListingLooseReferences {
            raced.run { _ = try? other.save(.text("theirs\n"), to: key, device: "phone", base: base) }
        }
        let mine = try store.save(.text("mine\n"), to: key, device: "laptop", base: base)
        store.instrumentation.afterListingLooseReferences(nil)
        #expect(raced.ran)
        #expect(mine.state == .inConflict, "the other writer's head was published beside this one")
        #expect(try DocumentStore.open(at: test.path).documentsInConflict().map(\.key) == [key])
    }
}

/// Runs a body once, however often it is asked to.
final class RacedOnce: @unchecked Sendable {
    private let lock = NSLock()
    private(set) var ran = false

    func run(_ body: () -> Void) {
        lock.lock()
        defer { lock.unlock() }
        guard !ran else { return }
        ran = true
        body()
    }
}
