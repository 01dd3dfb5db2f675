import Foundation
import Truce

/// The app's notes: one Truce store per device, written the way the Truce 0.1.0 README and Getting Started showed.
///
/// Synchronous calls are made from synchronous and from `async` code alike, as 0.1.0 allowed: only the calls that
/// had an `async` form there are awaited.
public final class NotesLibrary: Sendable {
    public let store: DocumentStore
    public let device: String

    /// Opens the library's store at `path`, creating it the first time.
    public init(path: String, device: String) throws {
        let exists = FileManager.default.fileExists(atPath: path)
        store = exists ? try DocumentStore.open(at: path, device: device) : try DocumentStore.create(at: path, device: device)
        self.device = device
    }

    /// Opens (or creates) the library's store from async code.
    public init(url: URL, device: String) async throws {
        store = try await DocumentStore(at: url, device: device)
        self.device = device
    }

    // MARK: Writing

    /// Writes a note and returns the version it made.
    public func write(_ text: String, to key: DocumentKey, base: VersionID? = nil) throws -> Version {
        try store.save(Data(text.utf8), to: key, base: base)
    }

    /// Writes a note as another device would have (a version from the phone, in tests).
    @discardableResult
    public func write(_ text: String, to key: DocumentKey, as device: String, base: VersionID) throws -> Version {
        // The one source break 0.2.0 keeps (CHANGELOG 0.2.0, "Saving"): `let version = try store.save(…)` is a
        // SaveResult now, so a version returned or compared from a `let` is annotated. 0.1.0 compiles this as well.
        let version: Version = try store.save(Data(text.utf8), to: key, device: device, base: base)
        return version
    }

    /// The current text of a note, nil when it is missing or deleted.
    public func text(of key: DocumentKey) throws -> String? {
        try store.contents(of: key).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Deletes a note.
    @discardableResult
    public func remove(_ key: DocumentKey) throws -> Version {
        try store.delete(key)
    }

    // MARK: Routing and resolving

    /// Routes to-do lists to the app's resolver and JSON settings to the structured one, for every replica.
    public func routeDocuments() throws {
        try store.route("*.todo", to: "todo-list")
        try store.route("*.json", to: "structured")
    }

    /// Settles a note with the resolvers the routing picks.
    public func settle(_ key: DocumentKey) async throws -> ResolveResult {
        try await store.resolve(key, registry: .notes, device: device)
    }

    /// Settles every note in conflict.
    public func settleAll() async throws -> [DocumentKey: ResolveResult] {
        try await store.resolveAll(registry: .notes)
    }

    // MARK: A person decides

    /// The line hunks of a note in conflict, for the app's conflict screen (a synchronous caller).
    public func hunks(of key: DocumentKey) throws -> [ConflictPoint] {
        try store.conflictPoints(of: key)
    }

    /// What the conflict screen shows, read from async code: each hunk's id and every side's text.
    public func conflictScreen(for key: DocumentKey) async throws -> [String: [String]] {
        let points = try store.conflictPoints(of: key)
        var screen: [String: [String]] = [:]
        for point in points {
            screen[point.id] = point.sides.map { String(decoding: $0.text ?? Data(), as: UTF8.self) }
        }
        return screen
    }

    /// The points the routed resolver offers (JSON Pointer paths for structured documents).
    public func points(of key: DocumentKey) async throws -> [ConflictPoint] {
        try await store.conflictPoints(of: key, registry: .notes)
    }

    /// Writes a person's answers to the line hunks, from the conflict screen's async action.
    public func answer(_ key: DocumentKey, with answers: [String: HunkAnswer]) async throws -> Version? {
        let result = try store.resolve(key, answers: answers, device: device)
        return result.version
    }

    /// Writes a person's answers to the routed resolver's points.
    public func answerPoints(_ key: DocumentKey, with answers: [String: HunkAnswer]) async throws -> Version? {
        try await store.resolve(key, answers: answers, registry: .notes).version
    }

    /// Writes the text a person edited by hand as the resolution, from the editor's async save action.
    public func settleByHand(_ key: DocumentKey, text: String) async throws -> ResolveResult {
        try store.resolve(key, content: Data(text.utf8))
    }

    // MARK: Sync

    /// Exchanges versions with the hub (the app's background sync timer, on its own thread).
    public func syncNow(with hub: String) throws -> SyncReport {
        try store.sync(with: hub)
    }

    /// Exchanges versions with the hub from async code.
    public func sync(with hub: String) async throws -> SyncReport {
        try await store.sync(with: hub)
    }

    /// Exchanges versions and settles what the app's resolvers can, sending the resolutions back.
    public func syncAndSettle(with hub: String) async throws -> SyncReport {
        try await store.sync(with: hub, resolving: .notes, device: device)
    }

    // MARK: Following changes

    /// Calls `handle` with every change from any writer until the task is cancelled.
    public func watch(_ handle: @escaping @Sendable (DocumentStateChange) -> Void) -> Task<Void, Never> {
        let events = store.events
        return Task {
            for await change in events {
                handle(change)
            }
        }
    }

    /// The changes other devices made since `token`, and the token to keep.
    public func changesFromOthers(since token: ChangeHistory.Token) throws -> ChangeHistory {
        try store.changes(since: token, excludingAuthor: device)
    }

    // MARK: Files

    /// Copies every note into a folder, from the app's async export action.
    public func exportNotes(to folder: String) async throws -> ExportReport {
        try store.exportDocuments(to: folder)
    }

    /// Reads a folder of notes in, from the app's async import action.
    public func importNotes(from folder: String) async throws -> ImportReport {
        try store.importDocuments(from: .folder(at: folder), device: device)
    }
}
