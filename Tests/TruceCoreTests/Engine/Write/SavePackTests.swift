import Foundation
import TestSupport
import Testing
import TruceCore

/// A save writes its objects as one small pack, and the small packs are folded into one once they grow many.
@Suite(.timeLimit(.minutes(10))) struct SavePackTests {
    static func packCount(_ test: TestStore) throws -> Int {
        try FileManager.default.contentsOfDirectory(atPath: test.path + "/objects/pack").filter { $0.hasSuffix(".pack") }.count
    }

    @Test func aSaveWritesOnePackAndNoLooseObject() throws {
        let test = try TestStore()
        try test.store.save(.text("one\n"), to: "notes/a.md", device: "laptop")
        let before = try Self.packCount(test)
        try test.store.save(.text("two\n"), to: "notes/a.md", device: "laptop")
        #expect(try Self.packCount(test) == before + 1)
        #expect(try test.git("count-objects", "-v").contains("count: 0\n"), "a save left loose objects")
        #expect(try test.git("fsck", "--strict", "--no-dangling").isEmpty)
    }

    @Test func manySavesKeepTheirSmallPacksFewAndLoseNothing() throws {
        let test = try TestStore()
        let saves = 2 * 50 + 7
        var saved: [DocumentKey: (VersionID, String)] = [:]
        var most = 0
        for index in 0..<saves {
            let key = try DocumentKey("docs/\(index % 13).txt")
            let text = "save \(index)\n"
            saved[key] = (try test.store.save(.text(text), to: key, device: "laptop").id, text)
            most = max(most, try Self.packCount(test))
        }
        // The journal's first entry and the consolidated packs are not small saves' packs, hence the slack of two.
        #expect(most <= 50 + 2, "small packs grew to \(most)")
        #expect(try Self.packCount(test) < saves / 2, "the packs were never folded")
        for (key, (id, text)) in saved {
            #expect(try test.store.currentVersion(of: key)?.id == id)
            #expect(try test.store.contents(of: key) == .text(text))
        }
        #expect(try test.store.changes().changes.count == saves)
        #expect(try test.git("fsck", "--strict", "--no-dangling").isEmpty)
    }
}

extension SavePackTests {
    /// A long-lived store (an app's) must not keep a descriptor for every pack it ever read: folded packs are dropped.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/self/fd"), "counts descriptors in /proc"))
    func aLongLivedStoreKeepsItsDescriptorsBoundedAcrossManySaves() throws {
        let test = try TestStore()
        // Only descriptors on this store's files: tests running beside this one open and close their own.
        func descriptors() throws -> Int {
            try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").filter { name in
                (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + name))?.hasPrefix(test.path + "/") == true
            }.count
        }
        try test.store.save(.text("x\n"), to: "a.txt", device: "laptop")
        let before = try descriptors()
        var most = before
        for index in 0..<240 {
            let key = try DocumentKey("docs/\(index % 7).txt")
            try test.store.save(.text("save \(index)\n"), to: key, device: "laptop")
            #expect(try test.store.contents(of: key) == .text("save \(index)\n"))
            most = max(most, try descriptors())
        }
        // At most one descriptor per small pack read since the last fold, and the few the store keeps open.
        #expect(most <= before + 50 + 5, "descriptors on the store grew from \(before) to \(most) over 240 saves")
    }
}
