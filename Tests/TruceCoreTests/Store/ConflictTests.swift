import Foundation
import TestSupport
import Testing

@testable import TruceCore

@Suite(.timeLimit(.minutes(10))) struct ConflictTests {
    static func date(_ text: String) -> Date { isoDate(text)! }

    @Test func concurrentSavesFromOneBaseAreAConflictWithTheLatestAsCurrent() async throws {
        let store = try TestStore()
        let base = try store.store.save(.text("a\nb\n"), to: "notes/todo.md", device: "laptop", date: Self.date("2026-11-30T09:00:00Z"))
        let laptop = try store.store.save(
            .text("A\nb\n"), to: "notes/todo.md", device: "laptop", base: base.id, date: Self.date("2026-11-30T10:00:00Z"))
        let phone = try store.store.save(
            .text("a\nB\n"), to: "notes/todo.md", device: "phone", base: base.id, date: Self.date("2026-11-30T11:00:00Z"))

        let versions = try store.store.versions(of: "notes/todo.md")
        #expect(versions.state == .inConflict)
        #expect(versions.current?.id == phone.id)
        #expect(versions.current?.isConflict == false)
        #expect(versions.conflicts.map(\.id) == [laptop.id])
        #expect(versions.conflicts.allSatisfy { $0.isConflict })
        #expect(versions.base?.id == base.id)
        #expect(try store.store.unresolvedConflictVersions(of: "notes/todo.md").map(\.id) == [laptop.id])
        #expect(try store.store.documentsInConflict().map(\.key) == ["notes/todo.md"])
        // git agrees: two refs, and their merge base is the base.
        #expect(try store.git("merge-base", laptop.id.hex, phone.id.hex) == base.id.hex + "\n")
        #expect(try store.git("fsck", "--strict", "--no-dangling").isEmpty)
    }

    @Test func onATiedDateTheLargerVersionIDIsCurrent() async throws {
        let store = try TestStore()
        let base = try store.store.save(.text("0\n"), to: "a.txt", device: "laptop", date: Self.date("2026-11-30T09:00:00Z"))
        let tie = Self.date("2026-11-30T10:00:00Z")
        let one = try store.store.save(.text("1\n"), to: "a.txt", device: "laptop", base: base.id, date: tie)
        let two = try store.store.save(.text("2\n"), to: "a.txt", device: "phone", base: base.id, date: tie)
        let explanation = try store.store.explain("a.txt")
        #expect(explanation.versions.current?.id == max(one.id, two.id))
        #expect(explanation.currentReason.contains("larger version id"))
    }

    @Test func threeDevicesMakeThreeHeadsWithOneBase() async throws {
        let store = try TestStore()
        let base = try store.store.save(.text("base\n"), to: "a.txt", device: "laptop", date: Self.date("2026-11-30T09:00:00Z"))
        var ids: [VersionID] = []
        for (index, device) in ["laptop", "phone", "tablet"].enumerated() {
            ids.append(
                try store.store.save(
                    .text("\(device)\n"), to: "a.txt", device: device, base: base.id,
                    date: Self.date("2026-11-30T1\(index):00:00Z")
                ).id)
        }
        let versions = try store.store.versions(of: "a.txt")
        #expect(versions.heads.map(\.id) == ids.reversed())
        #expect(versions.base?.id == base.id)
    }

    @Test func savingOnAnOlderBaseThanTheHeadMakesAConflict() async throws {
        let store = try TestStore()
        let one = try store.store.save(.text("1\n"), to: "a.txt", device: "laptop")
        let two = try store.store.save(.text("2\n"), to: "a.txt", device: "laptop")
        let fork = try store.store.save(.text("1b\n"), to: "a.txt", device: "phone", base: one.id)
        let versions = try store.store.versions(of: "a.txt")
        #expect(Set(versions.heads.map(\.id)) == [two.id, fork.id])
        #expect(versions.base?.id == one.id)
    }

    @Test func editAgainstDeleteIsAConflict() async throws {
        let store = try TestStore()
        let base = try store.store.save(.text("x\n"), to: "a.txt", device: "laptop", date: Self.date("2026-11-30T09:00:00Z"))
        let deletion = try store.store.delete("a.txt", device: "phone", base: base.id, date: Self.date("2026-11-30T10:00:00Z"))
        let edit = try store.store.save(.text("y\n"), to: "a.txt", device: "laptop", base: base.id, date: Self.date("2026-11-30T11:00:00Z"))
        let versions = try store.store.versions(of: "a.txt")
        #expect(versions.state == .inConflict)
        #expect(versions.current?.id == edit.id)
        #expect(versions.conflicts.map(\.id) == [deletion.id])
        #expect(versions.conflicts[0].isDeletion)
    }

    @Test func historyListsEveryVersionAndMarksConflicts() async throws {
        let store = try TestStore()
        let base = try store.store.save(.text("0\n"), to: "a.txt", device: "laptop", date: Self.date("2026-11-30T09:00:00Z"))
        let left = try store.store.save(.text("1\n"), to: "a.txt", device: "laptop", base: base.id, date: Self.date("2026-11-30T10:00:00Z"))
        let right = try store.store.save(.text("2\n"), to: "a.txt", device: "phone", base: base.id, date: Self.date("2026-11-30T11:00:00Z"))
        let history = try store.store.history(of: "a.txt")
        #expect(Set(history.map(\.id)) == [base.id, left.id, right.id])
        #expect(history.last?.id == base.id)
        #expect(history.first { $0.id == left.id }?.isConflict == true)
        #expect(history.first { $0.id == right.id }?.isConflict == false)
        #expect(throws: TruceError.documentNotFound("nothing")) { try store.store.history(of: "nothing") }
    }

    @Test func aVersionEqualsAndHashesAsItselfWhicheverCallReadIt() async throws {
        let store = try TestStore()
        let made = try store.makeConflict("a.txt", base: .text("0\n"), heads: [("laptop", .text("1\n")), ("phone", .text("2\n"))])
        let asConflict = try #require(try store.store.versions(of: "a.txt").conflicts.first)
        let lookedUp = try store.store.version(asConflict.id.hex, of: "a.txt")
        let inHistory = try #require(try store.store.history(of: "a.txt").first { $0.id == made.heads[0].id })
        // The flags are what each call knew, and stay as they were read ...
        #expect(asConflict.isConflict && !lookedUp.isConflict && inHistory.isConflict)
        // ... but they are not the version's identity: one commit of one document is one version.
        #expect(asConflict == lookedUp && lookedUp == inHistory)
        #expect(asConflict.hashValue == lookedUp.hashValue)
        #expect(Set([asConflict, lookedUp, inHistory]).count == 1)
        // Once resolved, the same version is read as resolved and no longer a conflict: still the same version.
        try await store.store.resolve("a.txt", to: .text("3\n"), device: "person")
        let resolved = try #require(try store.store.history(of: "a.txt").first { $0.id == made.heads[0].id })
        #expect(resolved.isResolved && !resolved.isConflict)
        #expect(resolved == asConflict && resolved.hashValue == asConflict.hashValue)
        // Identity is the id and the document: the base is another version.
        #expect(made.base != made.heads[0])
    }

    @Test func eventsReportEverySaveWithTheStatesAroundIt() async throws {
        let store = try TestStore()
        let events = store.store.events
        let base = try store.store.save(.text("0\n"), to: "a.txt", device: "laptop")
        try store.store.save(.text("1\n"), to: "a.txt", device: "laptop", base: base.id)
        try store.store.save(.text("2\n"), to: "a.txt", device: "phone", base: base.id)
        try store.store.save(.text("x\n"), to: "b.txt", device: "phone")
        try store.store.delete("b.txt", device: "phone")
        let received = try await firstElements(5, of: events, waitingFor: "the five changes of a.txt and b.txt")
        #expect(
            received.map { "\($0.kind) \($0.key) \($0.author) \($0.previous)→\($0.current)" } == [
                "save a.txt laptop absent→settled", "save a.txt laptop settled→settled", "save a.txt phone settled→in conflict",
                "save b.txt phone absent→settled", "delete b.txt phone settled→deleted",
            ])
        #expect(received.map(\.changedState) == [true, false, true, true, true])
        #expect(received[2].becameInConflict)
    }

    @Test func concurrentTasksSavingFromOneBaseAllLand() async throws {
        let store = try TestStore()
        let base = try store.store.save(.text("0\n"), to: "a.txt", device: "laptop")
        let shared = store.store
        let ids = try await withThrowingTaskGroup(of: VersionID.self) { group in
            for index in 0..<16 {
                group.addTask { try shared.save(.text("\(index)\n"), to: "a.txt", device: "device\(index)", base: base.id).id }
            }
            return try await group.reduce(into: Set<VersionID>()) { $0.insert($1) }
        }
        #expect(ids.count == 16)
        #expect(Set(try store.store.versions(of: "a.txt").heads.map(\.id)) == ids)
    }
}
