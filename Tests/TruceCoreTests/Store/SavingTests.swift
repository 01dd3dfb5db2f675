import Foundation
import TestSupport
import Testing

@testable import TruceCore

@Suite(.timeLimit(.minutes(10))) struct SavingTests {
    static let contents: [(String, Data)] = [
        ("text", .text("line one\nline two\n")),
        ("empty", Data()),
        ("no trailing newline", .text("no newline at end")),
        ("CRLF", .text("one\r\ntwo\r\n")),
        ("invalid UTF-8", Data([0x66, 0x6F, 0xFF, 0xFE, 0xC3, 0x28, 0x0A])),
        ("binary with NUL", Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 31) })),
    ]

    @Test(arguments: contents)
    func storesBytesExactlyAndGitShowsThem(label: String, content: Data) throws {
        let store = try TestStore()
        let version = try store.store.save(content, to: "docs/file.bin", device: "laptop")
        #expect(try store.store.contents(of: version) == content)
        let shown = try git("-C", store.path, "show", "\(version.id.hex):docs/file.bin")
        #expect(shown.status == 0)
        #expect(shown.stdout == content)
    }

    @Test func aVersionIsACommitAuthoredByTheDeviceWithTrailers() throws {
        let store = try TestStore()
        let date = try #require(isoDate("2026-11-30T10:00:00Z"))
        let version = try store.store.save(.text("hello\n"), to: "notes/todo.md", device: "Ada's laptop", date: date)
        #expect(version.deviceName == "Ada's laptop")
        #expect(version.modificationDate == date)
        #expect(try store.git("log", "-1", "--format=%an|%aI", version.id.hex) == "Ada's laptop|2026-11-30T10:00:00+00:00\n")
        let message = try store.git("log", "-1", "--format=%B", version.id.hex)
        let trailers = try git("interpret-trailers", "--parse", input: .text(message)).output
        #expect(trailers == "Document: notes/todo.md\nDevice: Ada's laptop\n")
        #expect(try store.git("fsck", "--strict", "--no-dangling").isEmpty)
    }

    @Test func savesChainFromTheCurrentVersionByDefault() throws {
        let store = try TestStore()
        let first = try store.store.save(.text("1\n"), to: "a.txt", device: "laptop")
        let second = try store.store.save(.text("2\n"), to: "a.txt", device: "laptop")
        #expect(second.parents == [first.id])
        let versions = try store.store.versions(of: "a.txt")
        #expect(versions.state == .settled)
        #expect(versions.current?.id == second.id)
        #expect(try store.store.history(of: "a.txt").map(\.id) == [second.id, first.id])
        // Only the head has a reference: the replaced one was dropped.
        #expect(try store.git("for-each-ref", "--format=%(objectname)", "refs/truce/heads/").split(separator: "\n") == [Substring(second.id.hex)])
    }

    @Test func everyReferenceUpdateIsInTheReflog() throws {
        let store = try TestStore()
        let version = try store.store.save(.text("x\n"), to: "a.txt", device: "laptop")
        let reference = ReferenceLayout.headReference(of: "a.txt", version: version.id)
        let reflog = try store.git("reflog", "show", "--format=%H %gs", reference)
        #expect(reflog == "\(version.id.hex) truce: save a.txt\n")
    }

    @Test func deletionIsAVersionWithoutTheKey() throws {
        let store = try TestStore()
        try store.store.save(.text("x\n"), to: "a/b.txt", device: "laptop")
        let deletion = try store.store.delete("a/b.txt", device: "phone")
        #expect(deletion.isDeletion)
        #expect(try store.store.state(of: "a/b.txt") == .deleted)
        #expect(try store.store.contents(of: "a/b.txt") == nil)
        #expect(try store.git("ls-tree", "-r", deletion.id.hex).isEmpty)
        #expect(throws: TruceError.alreadyDeleted("a/b.txt", version: deletion.id)) { try store.store.delete("a/b.txt", device: "phone") }
        let restored = try store.store.save(.text("back\n"), to: "a/b.txt", device: "laptop")
        #expect(restored.parents == [deletion.id])
        #expect(try store.store.state(of: "a/b.txt") == .settled)
    }

    @Test func deletingAnAbsentDocumentFailsAndChangesNothing() throws {
        let store = try TestStore()
        let before = snapshot(ofStore: store.path)
        #expect(throws: TruceError.documentNotFound("nothing.txt")) { try store.store.delete("nothing.txt", device: "laptop") }
        #expect(snapshot(ofStore: store.path) == before)
    }

    @Test func aBaseFromAnotherDocumentOrMissingIsRejectedAndChangesNothing() throws {
        let store = try TestStore()
        let other = try store.store.save(.text("x\n"), to: "other.txt", device: "laptop")
        try store.store.save(.text("y\n"), to: "mine.txt", device: "laptop")
        let before = snapshot(ofStore: store.path)
        #expect(throws: TruceError.versionOfAnotherDocument(other.id, requested: "mine.txt", actual: "other.txt")) {
            try store.store.save(.text("z\n"), to: "mine.txt", device: "laptop", base: other.id)
        }
        let missing = try #require(VersionID(hex: String(repeating: "ab", count: 20)))
        #expect(throws: TruceError.versionNotFound(missing.hex)) {
            try store.store.save(.text("z\n"), to: "mine.txt", device: "laptop", base: missing)
        }
        #expect(throws: TruceError.versionNotFound("zzzz")) { try store.store.version("zzzz", of: "mine.txt") }
        #expect(snapshot(ofStore: store.path) == before)
    }

    @Test(arguments: ["", "   ", "evil <x@y>", "line\nbreak"])
    func rejectsDeviceNamesGitCannotStore(device: String) throws {
        let store = try TestStore()
        let before = snapshot(ofStore: store.path)
        #expect {
            try store.store.save(.text("x"), to: "a.txt", device: device)
        } throws: { error in
            if case .invalidDeviceName = error as? TruceError { return true }
            return false
        }
        #expect(snapshot(ofStore: store.path) == before)
    }

    @Test func keysThatLookLikeRefsStayInsideTheStoresOwnRefs() throws {
        let store = try TestStore()
        for key in ["HEAD", "refs/heads/main", "x.lock", "a;rm -rf b.md", "$(touch x).md", "~^:?*[@{"] {
            let version = try store.store.save(.text(key), to: DocumentKey(key), device: "laptop")
            #expect(try store.store.contents(of: version) == .text(key))
        }
        let references = try store.git("for-each-ref", "--format=%(refname)").split(separator: "\n")
        #expect(references.count == 8)
        #expect(references.allSatisfy { $0.hasPrefix("refs/truce/heads/") || $0 == "refs/truce/journal" || $0 == StoreCreation.headBranch })
        #expect(try git("-C", store.path, "rev-parse", "--verify", "-q", "refs/heads/main").status != 0)
        #expect(
            try store.store.documents().map(\.rawValue).sorted() == [
                "$(touch x).md", "HEAD", "a;rm -rf b.md", "refs/heads/main", "x.lock", "~^:?*[@{",
            ])
        #expect(try store.git("fsck", "--strict", "--no-dangling").isEmpty)
    }
}
