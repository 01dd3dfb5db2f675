import Foundation
import TestSupport
import Testing

@testable import TruceCore

@Suite(.timeLimit(.minutes(10))) struct StoreLifecycleTests {
    @Test func createWritesTheConfigSpecAsksFor() throws {
        let store = try TestStore()
        #expect(try store.git("config", "core.logAllRefUpdates") == "always\n")
        #expect(try store.git("config", "core.fsync") == "all\n")
        #expect(try store.git("config", "core.fsyncMethod") == "fsync\n")
        // Deprecated in git 2.39: every git command on the store would warn (git config exits 1 for a name it lacks).
        #expect(try git(["-C", store.path, "config", "--get-all", "core.fsyncObjectFiles"]).status == 1)
        #expect(try store.git("rev-parse", "--is-bare-repository") == "true\n")
        #expect(FileManager.default.fileExists(atPath: store.path + "/info/attributes"))
    }

    @Test func openReopensAStore() throws {
        let store = try TestStore()
        try store.store.save(.text("x\n"), to: "a.txt", device: "laptop")
        let reopened = try DocumentStore.open(at: store.path)
        #expect(try reopened.contents(of: "a.txt") == .text("x\n"))
    }

    @Test func createRefusesAnExistingNonEmptyDirectory() throws {
        let store = try TestStore()
        let before = snapshot(ofStore: store.path)
        #expect(throws: TruceError.storeExists(store.path)) { try DocumentStore.create(at: store.path) }
        #expect(snapshot(ofStore: store.path) == before)
    }

    /// The creation marker beside files a creation never makes is no interrupted creation, whose leftovers the next
    /// creation may remove: creating a store there, or opening one (which creates in an empty directory), is refused
    /// with a clear error, and every file of the user's stays byte for byte.
    @Test(arguments: CreationMarkedDirectory.allCases)
    func aDirectoryWithTheCreationMarkerBesideTheUsersFilesIsRefusedAndKept(_ kind: CreationMarkedDirectory) async throws {
        let directory = TemporaryDirectory("truce-marked")
        // A directory for each call, so that each is seen to refuse it on its own.
        func marked(_ name: String) throws -> (path: String, before: [String: Data?]) {
            let path = directory.file(name)
            try kind.make(at: path)
            let before = try snapshot(ofDirectory: path)
            try #require(before.count >= 3 && before["truce-creating"] != nil)
            return (path, before)
        }
        // Not a store, and not one whose creation `truce init` would finish: that would remove the user's files.
        func isRefusal(_ error: any Error, of path: String) -> Bool {
            guard case .notAStore(let reported, let reason) = error as? TruceError, reported == path else { return false }
            return kind == .userFiles || reason == "it is a git repository without 'truce.version' in its config"
        }

        let created = try marked("created")
        #expect(throws: TruceError.storeExists(created.path)) { try DocumentStore.create(at: created.path, device: "laptop") }
        #expect(try snapshot(ofDirectory: created.path) == created.before, "create changed the directory")

        let initialized = try marked("initialized")
        await #expect {
            try await DocumentStore(at: URL(fileURLWithPath: initialized.path), device: "laptop")
        } throws: { isRefusal($0, of: initialized.path) }
        #expect(try snapshot(ofDirectory: initialized.path) == initialized.before, "DocumentStore(at:device:) changed the directory")

        let opened = try marked("opened")
        #expect {
            try DocumentStore.open(at: opened.path)
        } throws: { isRefusal($0, of: opened.path) }
        #expect(try snapshot(ofDirectory: opened.path) == opened.before, "open changed the directory")
    }

    /// What a creation killed half-way leaves (a bare repository without `truce.version`, and the marker) is made a
    /// whole store by the next creation: the refusal above is for the user's files, not for the marker.
    @Test func anInterruptedCreationIsMadeWholeByTheNextOne() throws {
        let directory = TemporaryDirectory("truce-marked")
        let path = directory.file("store")
        try #require(try git("init", "-q", "--bare", path).status == 0)
        try Data().write(to: URL(fileURLWithPath: path + "/truce-creating"))
        let store = try DocumentStore.create(at: path, device: "laptop")
        #expect(!FileManager.default.fileExists(atPath: path + "/truce-creating"))
        #expect(try git(["-C", path, "config", "truce.version"]).output == "1\n")
        try store.save(.text("x\n"), to: "a.txt")
        #expect(try git(["-C", path, "fsck", "--strict"]).status == 0)
    }

    @Test func openFailsOnAMissingPath() {
        let directory = TemporaryDirectory()
        #expect(throws: TruceError.storeNotFound(directory.file("nope"))) { try DocumentStore.open(at: directory.file("nope")) }
    }

    @Test func openFailsOnAFileOrAnEmptyDirectoryOrAPlainGitRepository() throws {
        let directory = TemporaryDirectory()
        let file = directory.write(.text("hello"), to: "file")
        try FileManager.default.createDirectory(atPath: directory.file("empty"), withIntermediateDirectories: true)
        #expect(try git("init", "-q", "--bare", directory.file("plain.git")).status == 0)
        for path in [file, directory.file("empty"), directory.file("plain.git")] {
            #expect {
                try DocumentStore.open(at: path)
            } throws: { error in
                guard case .notAStore(let reported, _) = error as? TruceError else { return false }
                return reported == path
            }
        }
    }
}
