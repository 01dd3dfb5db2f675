import Foundation
import TestSupport
import Testing
import TruceGit

@testable import TruceCore

@Suite(.timeLimit(.minutes(10))) struct BatchSavingTests {
    @Test func aBatchLandsAsOnePackWithEveryVersionChainedPerKey() throws {
        let test = try TestStore()
        let existing = try test.store.save(.text("before\n"), to: "docs/0.txt", device: "laptop")
        let packsBefore = try test.git("count-objects", "-v")
        let start = Date(timeIntervalSince1970: 1_796_000_000)
        let saves = (0..<300).map { index in
            BatchSave(
                key: try! DocumentKey("docs/\(index % 30).txt"), content: .text("save \(index)\n"), device: "bulk",
                date: start.addingTimeInterval(Double(index)))
        }
        let ids = try test.store.saveBatch(saves)
        #expect(ids.count == 300)
        for key in 0..<30 {
            let versions = try test.store.versions(of: DocumentKey("docs/\(key).txt"))
            #expect(versions.state == .settled)
            #expect(versions.current?.id == ids[270 + key])
            #expect(try test.store.contents(of: versions.current!) == .text("save \(270 + key)\n"))
            #expect(try test.store.history(of: DocumentKey("docs/\(key).txt")).count == (key == 0 ? 11 : 10))
        }
        #expect(try test.store.history(of: "docs/0.txt").last?.id == existing.id)
        #expect(try test.store.changes().changes.count == 301)
        // The store's creation made one pack (its branch's commit), the save before one more, the batch one more.
        #expect(packsBefore.contains("packs: 2\n"))
        #expect(try test.git("count-objects", "-v").contains("packs: 3\n"))
        #expect(try test.git("fsck", "--strict", "--no-dangling").isEmpty)
    }

    @Test func aSaveOfABatchWithoutADeviceIsByTheStoresThenTheFallbackDevice() throws {
        let directory = TemporaryDirectory()
        let laptop = try DocumentStore.create(at: directory.file("store"), device: "laptop")
        let ids = try laptop.saveBatch([
            BatchSave(key: "a.txt", content: .text("a\n")),
            BatchSave(key: "b.txt", content: .text("b\n"), device: "named"),
        ])
        #expect(try laptop.versions(of: "a.txt").current?.deviceName == "laptop")
        #expect(try laptop.versions(of: "b.txt").current?.deviceName == "named")
        #expect(try laptop.changes().changes.map(\.version) == ids)
        // A store opened without a device: the rule of every `device:`, $TRUCE_DEVICE then the host name.
        let plain = try DocumentStore.open(at: directory.file("store"))
        let deletion = try plain.saveBatch([BatchSave(key: "a.txt", content: nil)])
        let fallback = DocumentStore.fallbackDevice.trimmingCharacters(in: .whitespaces)
        #expect(try plain.history(of: "a.txt").first?.id == deletion.first)
        #expect(try plain.history(of: "a.txt").first?.deviceName == fallback)
        #expect(try plain.history(of: "a.txt").first?.isDeletion == true)
    }

    @Test func aBatchWithABadDeviceWritesNothing() throws {
        let test = try TestStore()
        let before = snapshot(ofStore: test.path)
        #expect(throws: TruceError.invalidDeviceName("", reason: "it is empty")) {
            try test.store.saveBatch([
                BatchSave(key: "a.txt", content: .text("x"), device: "laptop"),
                BatchSave(key: "b.txt", content: .text("y"), device: ""),
            ])
        }
        #expect(snapshot(ofStore: test.path) == before)
    }

    @Test func anEmptyBatchWritesNothing() throws {
        let test = try TestStore()
        let before = snapshot(ofStore: test.path)
        #expect(try test.store.saveBatch([]).isEmpty)
        #expect(snapshot(ofStore: test.path) == before)
    }

    @Test func aBatchKeepsKeysThatDifferOnlyInNormalizationApart() throws {
        let test = try TestStore()
        let composed: DocumentKey = "caf\u{E9}.md", decomposed: DocumentKey = "cafe\u{301}.md"
        #expect(composed != decomposed)
        #expect(Set([composed, decomposed]).count == 2)
        _ = try test.store.saveBatch([
            BatchSave(key: composed, content: .text("NFC"), device: "laptop"),
            BatchSave(key: decomposed, content: .text("NFD"), device: "laptop"),
        ])
        #expect(try test.store.contents(of: composed) == .text("NFC"))
        #expect(try test.store.contents(of: decomposed) == .text("NFD"))
        #expect(try test.store.history(of: decomposed).count == 1, "one key's save must not chain on the other's")
    }

    /// Content bigger than `ObjectStaging.spillLimit` allows in memory, over `count` documents.
    private func bigSaves(_ count: Int, tag: String) -> [BatchSave] {
        let each = ObjectStaging.spillLimit.bytes / 2 + 1
        return (0..<count).map { index in
            var content = Data(repeating: UInt8(ascii: "a") + UInt8(index), count: each)
            content.append(contentsOf: Array("\(tag) \(index)\n".utf8))
            return BatchSave(key: try! DocumentKey("big/\(index).bin"), content: content, device: "bulk")
        }
    }

    @Test func aBatchBiggerThanMemoryAllowsPacksAsItGoesAndLandsWhole() throws {
        let test = try TestStore()
        _ = try test.store.save(.text("before\n"), to: "small.txt", device: "laptop")
        // Three saves of half the limit each: the third passes it, so memory is packed once before the end.
        let saves = bigSaves(3, tag: "first")
        let ids = try test.store.saveBatch(saves)
        #expect(try test.git("count-objects", "-v").contains("packs: 4\n"), "one pack for the creation, one for the save, two for the batch")
        for (index, save) in saves.enumerated() {
            let versions = try test.store.versions(of: save.key)
            #expect(versions.current?.id == ids[index])
            #expect(try test.store.contents(of: versions.current!) == save.content)
        }
        #expect(try test.store.changes().changes.map(\.version).suffix(3) == ids)
        #expect(try test.git("fsck", "--strict", "--no-dangling").isEmpty)
    }

    @Test func aBigBatchWithABadBaseAtItsEndWritesNothing() throws {
        let test = try TestStore()
        let other = try test.store.save(.text("other\n"), to: "other.txt", device: "laptop")
        let before = snapshot(ofStore: test.path)
        // The bad save comes after enough content to pack once: it must be refused before anything is written.
        var saves = bigSaves(3, tag: "refused")
        saves.append(BatchSave(key: "big/0.bin", content: .text("late\n"), device: "bulk", base: other.id))
        #expect(throws: TruceError.self) { try test.store.saveBatch(saves) }
        #expect(snapshot(ofStore: test.path) == before)
    }
}
