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
