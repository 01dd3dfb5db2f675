import AdopterKit
import Foundation
import Testing
import Truce
import TruceCommandLine

/// What the app does with Truce, on real stores: written against Truce 0.1.0 and left as it was.
@Suite struct AdopterTests {
    let list: DocumentKey = "lists/shop.todo"

    /// A to-do list both devices edited from the same base, in one store: a conflict.
    func conflictedList(in library: NotesLibrary) throws -> (base: Version, laptop: Version, phone: Version) {
        let base = try library.write("- [ ] milk\n- [ ] eggs\n", to: list)
        let laptop = try library.write("- [x] milk\n- [ ] eggs\n", to: list, base: base.id)
        let phone = try library.write("- [ ] milk\n- [ ] eggs\n- [ ] bread\n", to: list, as: "phone", base: base.id)
        return (base, laptop, phone)
    }

    @Test func theAppsResolverSettlesARoutedList() async throws {
        let scratch = try Scratch()
        let library = try NotesLibrary(path: scratch.join("store"), device: "laptop")
        let versions = try conflictedList(in: library)
        #expect(try library.store.state(of: list) == .inConflict)
        #expect(try library.store.unresolvedConflictVersions(of: list).count == 1)
        #expect(versions.laptop.id != versions.phone.id)

        try library.routeDocuments()
        let result = try await library.settle(list)
        guard case .resolved(let resolution, let resolver, let state) = result else {
            Issue.record("not resolved: \(result)")
            return
        }
        #expect(resolver == "todo-list")
        #expect(state == .settled)
        #expect(resolution.resolvedBy == "todo-list")
        // Both heads list milk and eggs first, so the merge is the same whichever head is current.
        #expect(try library.text(of: list) == "- [x] milk\n- [ ] eggs\n- [ ] bread\n")
        #expect(try library.store.state(of: list) == .settled)
    }

    @Test func eventsReportTheConflictAsItLands() async throws {
        let scratch = try Scratch()
        let library = try NotesLibrary(path: scratch.join("store"), device: "laptop")
        let inbox = Inbox<DocumentStateChange>()
        let watcher = library.watch { inbox.put($0) }
        defer { watcher.cancel() }
        // The watcher subscribes when its task starts: give it the time to.
        try await Task.sleep(nanoseconds: 200_000_000)

        _ = try conflictedList(in: library)
        let conflict = try await inbox.first { $0.becameInConflict }
        #expect(conflict?.key == list)
        #expect(conflict?.author == "phone")
        #expect(conflict?.kind == .save)
    }

    @Test func twoDevicesConvergeThroughABareHub() async throws {
        let scratch = try Scratch()
        let hub = scratch.join("hub.git")
        try git(["init", "-q", "--bare", hub])
        let laptop = try NotesLibrary(path: scratch.join("laptop"), device: "laptop")
        let phone = try await NotesLibrary(url: URL(fileURLWithPath: scratch.join("phone")), device: "phone")

        let base = try laptop.write("- [ ] milk\n- [ ] eggs\n", to: list)
        try laptop.routeDocuments()
        // The laptop syncs on its timer's thread, the phone from async code.
        _ = try laptop.syncNow(with: hub)
        let first = try await phone.sync(with: hub)
        #expect(first.received.contains { $0.key == list })
        #expect(try phone.text(of: list) == "- [ ] milk\n- [ ] eggs\n")

        // Offline, both edit the list.
        _ = try laptop.write("- [x] milk\n- [ ] eggs\n", to: list, base: base.id)
        let phoneBase = try #require(try phone.store.currentVersion(of: list))
        _ = try phone.write("- [ ] milk\n- [ ] eggs\n- [ ] bread\n", to: list, base: phoneBase.id)

        _ = try laptop.syncNow(with: hub)
        let phoneReport = try await phone.syncAndSettle(with: hub)
        #expect(phoneReport.resolved == [list])
        let laptopReport = try await laptop.syncAndSettle(with: hub)
        #expect(laptopReport.needsPerson.isEmpty)

        let laptopHeads = try laptop.store.versions(of: list)
        let phoneHeads = try phone.store.versions(of: list)
        #expect(laptopHeads.state == .settled)
        #expect(laptopHeads.current?.id == phoneHeads.current?.id)
        #expect(try laptop.text(of: list) == "- [x] milk\n- [ ] eggs\n- [ ] bread\n")

        // What the phone changed, as the laptop's history shows it to the laptop.
        let fromOthers = try laptop.changesFromOthers(since: .beginning)
        #expect(fromOthers.changes.contains { $0.author == "phone" })
    }

    @Test func aPersonAnswersTheLineHunks() async throws {
        let scratch = try Scratch()
        let library = try NotesLibrary(path: scratch.join("store"), device: "laptop")
        let note: DocumentKey = "notes/plan.md"
        let base = try library.write("# Plan\n\nship on Monday\n", to: note)
        _ = try library.write("# Plan\n\nship on Tuesday\n", to: note, base: base.id)
        _ = try library.write("# Plan\n\nship on Friday\n", to: note, as: "phone", base: base.id)

        // The synchronous caller and the async screen see the same hunk.
        let hunks = try library.hunks(of: note)
        #expect(hunks.map(\.id) == ["H1"])
        let screen = try await library.conflictScreen(for: note)
        #expect(Set(screen["H1"] ?? []) == ["ship on Tuesday\n", "ship on Friday\n"])

        let resolution = try await library.answer(note, with: ["H1": .base])
        #expect(resolution?.resolvedBy == DocumentStore.personResolverName)
        #expect(try library.text(of: note) == "# Plan\n\nship on Monday\n")
    }

    @Test func aPersonAnswersAStructuredDocumentByPath() async throws {
        let scratch = try Scratch()
        let library = try NotesLibrary(path: scratch.join("store"), device: "laptop")
        let settings: DocumentKey = "settings/editor.json"
        try library.routeDocuments()
        let base = try library.write(#"{"theme": "light", "size": 12}"#, to: settings)
        _ = try library.write(#"{"theme": "dark", "size": 12}"#, to: settings, base: base.id)
        _ = try library.write(#"{"theme": "sepia", "size": 14}"#, to: settings, as: "phone", base: base.id)

        let points = try await library.points(of: settings)
        #expect(points.map(\.path) == ["/theme"])
        let theirs = try #require(points.first?.sides.first { !$0.isCurrent })
        _ = try await library.answerPoints(settings, with: ["/theme": .version(theirs.version.hex)])
        let merged = try #require(try library.text(of: settings))
        #expect(merged.contains(#""size": 14"#))
        #expect(merged.contains(#""theme": "sepia""#) || merged.contains(#""theme": "dark""#))
        #expect(try library.store.state(of: settings) == .settled)
    }

    @Test func aPersonWritesTheWholeDocument() async throws {
        let scratch = try Scratch()
        let library = try NotesLibrary(path: scratch.join("store"), device: "laptop")
        _ = try conflictedList(in: library)
        let result = try await library.settleByHand(list, text: "- [x] milk\n")
        #expect(result.version?.resolvedBy == DocumentStore.personResolverName)
        #expect(try library.text(of: list) == "- [x] milk\n")
    }

    @Test func plainGitReadsTheStore() async throws {
        let scratch = try Scratch()
        let library = try NotesLibrary(path: scratch.join("store"), device: "laptop")
        // What a save returns, read as 0.1.0's Version was: its id, author and date.
        let version = try library.store.save(Data("hello\n".utf8), to: "notes/hello.md")
        #expect(version.deviceName == "laptop")
        #expect(version.key == "notes/hello.md")
        #expect(try library.store.contents(of: version) == Data("hello\n".utf8))
        // Truce 0.2.0 saves through the store's save log by default; git sees a save at the next checkpoint
        // (CHANGELOG 0.2.0, "Saving"). checkpoint() is in 0.1.0's API, so this code builds against both.
        try library.store.checkpoint()
        let refs = try git(["-C", library.store.path, "for-each-ref", "--format=%(objectname)"])
        #expect(refs.split(separator: "\n").contains { $0 == version.id.hex })
        #expect(try git(["-C", library.store.path, "cat-file", "-t", version.id.hex]) == "commit\n")
    }

    @Test func foldersGoOutAndComeBackIn() async throws {
        let scratch = try Scratch()
        let library = try NotesLibrary(path: scratch.join("store"), device: "laptop")
        _ = try library.write("one\n", to: "notes/one.md")
        _ = try library.write("two\n", to: "notes/deep/two.md")
        let exported = try await library.exportNotes(to: scratch.join("copy"))
        #expect(exported.written == 2)
        #expect(try String(contentsOfFile: scratch.join("copy/notes/deep/two.md"), encoding: .utf8) == "two\n")

        let other = try NotesLibrary(path: scratch.join("other"), device: "tablet")
        let imported = try await other.importNotes(from: scratch.join("copy"))
        #expect(imported.newVersions == 2)
        #expect(try other.text(of: "notes/one.md") == "one\n")
    }

    @Test func theAppsOwnCommandLineSettlesWithTheAppsResolver() async throws {
        let scratch = try Scratch()
        let library = try NotesLibrary(path: scratch.join("store"), device: "laptop")
        _ = try conflictedList(in: library)
        try library.routeDocuments()
        let path = library.store.path

        #expect(await CommandLineTool.run(arguments: ["--store", path, "status"], registry: .notes) == 0)
        // The built-in resolvers alone do not know the app's `todo-list`: bad input, nothing written.
        #expect(await CommandLineTool.run(arguments: ["--store", path, "resolve", list.rawValue]) == 2)
        #expect(try library.store.state(of: list) == .inConflict)
        // With the app's registry, it settles.
        #expect(await CommandLineTool.run(arguments: ["--store", path, "resolve", list.rawValue], registry: .notes) == 0)
        #expect(try library.store.state(of: list) == .settled)
        #expect(try library.store.currentVersion(of: list)?.resolvedBy == "todo-list")
    }
}
