import Foundation
import TestSupport
import Testing

@testable import TruceCore

/// A hub that changes what it holds between syncs: each change is refused with an error that names the replica,
/// nothing of it is adopted, and the reader's store stays as it was.
@Suite(.timeLimit(.minutes(10))) struct HostileHubTests {
    enum Attack: String, CaseIterable {
        case partModified, partTruncated, indexModified, entryReplayed, entryDropped, entriesReordered, chainRolledBack, slotRenamed, slotsSwapped
        case entriesWithheld, keyRingRolledBack, ownEntriesRolledBack
    }

    /// Plumbing on the bare repository at `hub`.
    struct Hub {
        let path: String

        @discardableResult
        func run(_ arguments: String..., input: Data = Data()) throws -> String {
            let result = try git(["-C", path] + arguments, input: input)
            #expect(result.status == 0, "git \(arguments.joined(separator: " ")): \(result.output)")
            return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
        }

        func slots() throws -> [String: String] {
            let lines = try run("for-each-ref", "--format=%(refname) %(objectname)", "refs/truce/sealed/replicas/").split(separator: "\n")
            return Dictionary(
                uniqueKeysWithValues: lines.map { line in
                    let parts = line.split(separator: " ")
                    return (String(parts[0]), String(parts[1]))
                })
        }

        /// `commit` with its blob `name` replaced by what `change` makes of it: a new commit on the same parents.
        func rewrite(_ commit: String, blob name: String, _ change: (Data) -> Data) throws -> String {
            let blob = try run("rev-parse", "\(commit):\(name)")
            let bytes = try git(["-C", path, "cat-file", "blob", blob]).stdout
            let replaced = try run("hash-object", "-w", "--stdin", input: change(bytes))
            let tree =
                try run("ls-tree", "\(commit)^{tree}").split(separator: "\n").map { line -> String in
                    line.hasSuffix("\t\(name)") ? line.replacingOccurrences(of: blob, with: replaced) : String(line)
                }.joined(separator: "\n") + "\n"
            let newTree = try run("mktree", input: Data(tree.utf8))
            return try commitTree(newTree, parents: try run("log", "-1", "--format=%P", commit).split(separator: " ").map(String.init))
        }

        func commitTree(_ tree: String, parents: [String]) throws -> String {
            let result = try git(
                ["-C", path, "-c", "user.name=truce", "-c", "user.email=sealed@truce", "commit-tree", tree, "-m", "Sealed entry"]
                    + parents.flatMap { ["-p", $0] })
            return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    static func replica(of store: TestStore) throws -> String {
        try store.git("config", "truce.replica").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test(arguments: Attack.allCases)
    func aHubThatAltersWhatItHoldsIsRefused(attack: Attack) async throws {
        let bare = try BareRepository("truce-hostile-hub"), path = bare.path
        let hub = Hub(path: path)
        let (writer, reader, _) = try await EncryptedHubTests.foundedAndJoined(hub: path)
        let key: DocumentKey = "notes/a.md"
        try writer.store.save(.text("one\n"), to: key, device: "writer")
        _ = try await writer.store.sync(with: path)
        let writerSlot = try #require(hub.slots().first?.key)
        #expect(try hub.slots().count == 1)
        let first = try #require(hub.slots()[writerSlot])
        _ = try await reader.store.sync(with: path)
        let readerSlot = try hub.slots().keys.first { $0 != writerSlot }
        try writer.store.save(.text("two\n"), to: key, device: "writer")
        _ = try await writer.store.sync(with: path)
        let second = try #require(hub.slots()[writerSlot])
        #expect(first != second)
        let keyRingBefore = try hub.run("rev-parse", "refs/truce/sealed/keyring")

        var syncing = reader
        // The replicas an error may name: the writer's, or the other one of a swapped pair (whichever is read first).
        var named = [try Self.replica(of: writer)]
        switch attack {
        case .partModified:
            try hub.run(
                "update-ref", writerSlot,
                try hub.rewrite(second, blob: "part-0") {
                    var d = $0
                    d[d.count / 2] ^= 1
                    return d
                })
        case .partTruncated:
            try hub.run("update-ref", writerSlot, try hub.rewrite(second, blob: "part-0") { $0.dropLast(10) })
        case .indexModified:
            try hub.run(
                "update-ref", writerSlot,
                try hub.rewrite(second, blob: "index") {
                    var d = $0
                    d[d.count - 100] ^= 0x20
                    return d
                })
        case .entryReplayed:
            // The second entry again, as if written a third time.
            try hub.run("update-ref", writerSlot, try hub.commitTree(try hub.run("rev-parse", "\(second)^{tree}"), parents: [second]))
        case .entryDropped:
            // A third entry straight on the first: a chain with the second left out.
            try writer.store.save(.text("three\n"), to: key, device: "writer")
            _ = try await writer.store.sync(with: path)
            let tip = try #require(hub.slots()[writerSlot])
            try hub.run("update-ref", writerSlot, try hub.commitTree(try hub.run("rev-parse", "\(tip)^{tree}"), parents: [first]))
        case .entriesReordered:
            // The third entry first, then the second: the same entries, in the wrong order.
            try writer.store.save(.text("three\n"), to: key, device: "writer")
            _ = try await writer.store.sync(with: path)
            let tip = try #require(hub.slots()[writerSlot])
            let third = try hub.commitTree(try hub.run("rev-parse", "\(tip)^{tree}"), parents: [first])
            try hub.run("update-ref", writerSlot, try hub.commitTree(try hub.run("rev-parse", "\(second)^{tree}"), parents: [third]))
        case .chainRolledBack:
            _ = try await reader.store.sync(with: path)
            try hub.run("update-ref", writerSlot, first)
        case .slotRenamed:
            try hub.run("update-ref", "refs/truce/sealed/replicas/" + String(repeating: "ab", count: 16), second)
            try hub.run("update-ref", "-d", writerSlot)
        case .slotsSwapped:
            // Two replicas' chains, each under the other's slot.
            let (third, _) = try await EncryptedHubTests.joinedAndApproved(path, by: writer)
            try third.store.save(.text("third\n"), to: "notes/c.md", device: "third")
            _ = try await third.store.sync(with: path)
            _ = try await reader.store.sync(with: path)
            let slots = try hub.slots()
            let thirdSlot = try #require(slots.keys.first { $0 != writerSlot && $0 != readerSlot })
            let (writerTip, thirdTip) = (try #require(slots[writerSlot]), try #require(slots[thirdSlot]))
            try writer.store.save(.text("three\n"), to: key, device: "writer")
            _ = try await writer.store.sync(with: path)
            try hub.run("update-ref", writerSlot, thirdTip)
            try hub.run("update-ref", thirdSlot, writerTip)
            named.append(try Self.replica(of: third))
        case .entriesWithheld:
            // A third device reads the second entry and writes; the hub then hides that second entry from the reader.
            let (third, _) = try await EncryptedHubTests.joinedAndApproved(path, by: writer)
            _ = try await third.store.sync(with: path)
            try third.store.save(.text("elsewhere\n"), to: "notes/b.md", device: "third")
            _ = try await third.store.sync(with: path)
            try hub.run("update-ref", writerSlot, first)
        case .keyRingRolledBack:
            _ = try await EncryptedHubTests.joinedAndApproved(path, by: writer)
            _ = try await reader.store.sync(with: path)
            try hub.run("update-ref", "refs/truce/sealed/keyring", keyRingBefore)
        case .ownEntriesRolledBack:
            try hub.run("update-ref", writerSlot, first)
            syncing = writer
        }
        let before = try syncing.git("for-each-ref", "refs/truce/heads/", "refs/truce/replicas/")
        await #expect {
            _ = try await syncing.store.sync(with: path)
        } throws: { error in
            guard case .invalidRemote(_, let reason) = error as? TruceError else { return false }
            let namesIt = attack == .ownEntriesRolledBack ? reason.contains("this replica") : named.contains { reason.contains($0) }
            #expect(namesIt || attack == .keyRingRolledBack, "\(attack): \(reason)")
            return true
        }
        #expect(try syncing.git("for-each-ref", "refs/truce/heads/", "refs/truce/replicas/") == before)
        #expect(try syncing.git("fsck", "--strict", "--no-dangling").isEmpty)
    }
}
