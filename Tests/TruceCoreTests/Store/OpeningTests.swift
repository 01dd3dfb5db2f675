import Foundation
import TestSupport
import Testing
import Truce

/// `DocumentStore(directory:device:resolvers:mode:saveLog:)`, the one way to open a store, synchronous in every mode.
@Suite(.timeLimit(.minutes(10))) struct OpeningTests {
    @Test func openOrCreateCreatesAMissingStoreThenOpensIt() async throws {
        let directory = TemporaryDirectory("truce-opening")
        let url = URL(fileURLWithPath: directory.file("notes"))
        // From async code, without `await`: opening is synchronous, and no async overload shares these labels.
        let first = try DocumentStore(directory: url, device: "laptop")
        #expect(first.path == url.path)
        #expect(first.device == "laptop")
        #expect(first.savesThroughLog)
        #expect(first.resolvers.names.contains("three-way"))
        let saved = try first.save(.text("a\n"), to: "a.txt")
        let again = try DocumentStore(directory: url, device: "phone", resolvers: ResolverRegistry())
        #expect(again.device == "phone")
        #expect(again.resolvers.names.isEmpty)
        #expect(try again.currentVersion(of: "a.txt")?.id == saved.id)
    }

    @Test func openOrCreateLeavesADirectoryOfOtherFilesAlone() throws {
        let directory = TemporaryDirectory("truce-opening")
        let folder = directory.file("photos")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Data.text("jpeg").write(to: URL(fileURLWithPath: folder + "/a.jpg"))
        #expect(throws: TruceError.self) { try DocumentStore(directory: URL(fileURLWithPath: folder)) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["a.jpg"])
    }

    @Test func openExistingNeedsAStore() throws {
        let directory = TemporaryDirectory("truce-opening")
        let missing = directory.file("nope")
        #expect(throws: TruceError.storeNotFound(missing)) {
            try DocumentStore(directory: URL(fileURLWithPath: missing), mode: .openExisting)
        }
        #expect(!FileManager.default.fileExists(atPath: missing))
        let made = try DocumentStore(directory: URL(fileURLWithPath: directory.file("store")), mode: .createNew)
        let opened = try DocumentStore(directory: URL(fileURLWithPath: made.path), device: "tablet", mode: .openExisting)
        #expect(opened.device == "tablet")
    }

    @Test func createNewRefusesAnExistingStoreAndRecordsItsSaveLog() throws {
        let directory = TemporaryDirectory("truce-opening")
        let url = URL(fileURLWithPath: directory.file("store"))
        let made = try DocumentStore(directory: url, mode: .createNew, saveLog: false)
        #expect(!made.savesThroughLog)
        #expect(throws: TruceError.storeExists(url.path)) { try DocumentStore(directory: url, mode: .createNew) }
        // `saveLog` is for a store the call creates: an existing one keeps its config.
        #expect(!(try DocumentStore(directory: url, saveLog: true)).savesThroughLog)
    }

    @Test func aDeviceIsCheckedAndAURLMustBeAFile() throws {
        let directory = TemporaryDirectory("truce-opening")
        let url = URL(fileURLWithPath: directory.file("store"))
        #expect(throws: TruceError.self) { try DocumentStore(directory: url, device: "a<b") }
        #expect(!FileManager.default.fileExists(atPath: url.path), "a bad device is refused before anything is created")
        let web = try #require(URL(string: "https://example.com/store"))
        #expect(throws: TruceError.self) { try DocumentStore(directory: web) }
    }

    @Test func theDeprecatedFormsOpenTheSameStore() async throws {
        let directory = TemporaryDirectory("truce-opening")
        let path = directory.file("store")
        let created = try DocumentStore.create(at: path, device: "laptop")
        #expect(created.path == path)
        let saved = try created.save(.text("a\n"), to: "a.txt")
        let opened = try DocumentStore.open(at: path)
        #expect(try opened.currentVersion(of: "a.txt")?.id == saved.id)
        let awaited = try await DocumentStore(at: URL(fileURLWithPath: path), device: "phone")
        #expect(awaited.device == "phone")
        #expect(awaited.resolvers.names == ResolverRegistry.standard.names)
        #expect(throws: TruceError.storeExists(path)) { try DocumentStore.create(at: path) }
    }
}
