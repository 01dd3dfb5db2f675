import CSQLite
import Foundation

/// The durable saves' peer: what an app that keeps versions in SQLite (Core Data, GRDB) pays for one save.
///
/// WAL mode with `synchronous=FULL`, so a committed transaction survives a
/// power loss as a returned `DocumentStore.save` must. One transaction per
/// save inserts the version (its content as a blob, its parent the head it
/// replaces), moves the document's head (an upsert) and appends a history
/// row. One connection is one writer; several connections on one file are
/// several writers, which SQLite serializes on its write lock (`BEGIN
/// IMMEDIATE`, waiting with a busy timeout as an app would). A connection is
/// used by one thread at a time (`SQLITE_OPEN_NOMUTEX`), hence unchecked.
final class SQLitePeer: @unchecked Sendable {
    private let database: OpaquePointer
    private let begin: OpaquePointer
    private let insertVersion: OpaquePointer
    private let moveHead: OpaquePointer
    private let appendHistory: OpaquePointer
    private let commit: OpaquePointer

    static let schema = """
        CREATE TABLE IF NOT EXISTS versions(id INTEGER PRIMARY KEY, document TEXT NOT NULL, parent INTEGER, device TEXT NOT NULL,
            date REAL NOT NULL, content BLOB NOT NULL);
        CREATE TABLE IF NOT EXISTS heads(document TEXT PRIMARY KEY, version INTEGER NOT NULL);
        CREATE TABLE IF NOT EXISTS history(id INTEGER PRIMARY KEY, document TEXT NOT NULL, version INTEGER NOT NULL, date REAL NOT NULL);
        """

    /// Opens (creating when needed) the database at `path` as one writer, durable as the peer must be.
    init(path: String) throws {
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        guard sqlite3_open_v2(path, &handle, flags, nil) == SQLITE_OK, let handle else {
            throw BenchFailure("sqlite: cannot open \(path): \(handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory")")
        }
        database = handle
        sqlite3_busy_timeout(handle, 30_000)
        try Self.execute(handle, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;")
        // A peer that is not durable would be a faster, different thing: check that SQLite took both settings.
        let mode = try Self.scalar(handle, "PRAGMA journal_mode"), synchronous = try Self.scalar(handle, "PRAGMA synchronous")
        guard mode == "wal", synchronous == "2" else { throw BenchFailure("sqlite: journal_mode \(mode), synchronous \(synchronous)") }
        try Self.execute(handle, Self.schema)
        begin = try Self.prepare(handle, "BEGIN IMMEDIATE")
        insertVersion = try Self.prepare(
            handle,
            "INSERT INTO versions(document, parent, device, date, content) VALUES(?1, (SELECT version FROM heads WHERE document = ?1), ?2, ?3, ?4)")
        moveHead = try Self.prepare(
            handle, "INSERT INTO heads(document, version) VALUES(?1, ?2) ON CONFLICT(document) DO UPDATE SET version = excluded.version")
        appendHistory = try Self.prepare(handle, "INSERT INTO history(document, version, date) VALUES(?1, ?2, ?3)")
        commit = try Self.prepare(handle, "COMMIT")
    }

    deinit {
        for statement in [begin, insertVersion, moveHead, appendHistory, commit] { sqlite3_finalize(statement) }
        sqlite3_close_v2(database)
    }

    /// Moves every committed transaction from the WAL into the database file and empties the WAL
    /// (`wal_checkpoint(TRUNCATE)`): the counterpart of a Truce checkpoint into git.
    func checkpoint() throws {
        try Self.execute(database, "PRAGMA wal_checkpoint(TRUNCATE);")
    }

    /// One durable save: the version, the head and the history row in one transaction, committed (WAL fsynced) on return.
    func save(_ document: String, content: Data, device: String, date: Date) throws {
        try step(begin)
        do {
            bind(document, at: 1, in: insertVersion)
            bind(device, at: 2, in: insertVersion)
            sqlite3_bind_double(insertVersion, 3, date.timeIntervalSince1970)
            try content.withUnsafeBytes { bytes in
                // SQLITE_STATIC (nil): the bytes stay put until the step below, which copies them into the page.
                sqlite3_bind_blob(insertVersion, 4, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(bytes.count), nil)
                try step(insertVersion)
            }
            let version = sqlite3_last_insert_rowid(database)
            bind(document, at: 1, in: moveHead)
            sqlite3_bind_int64(moveHead, 2, version)
            try step(moveHead)
            bind(document, at: 1, in: appendHistory)
            sqlite3_bind_int64(appendHistory, 2, version)
            sqlite3_bind_double(appendHistory, 3, date.timeIntervalSince1970)
            try step(appendHistory)
            try step(commit)
        } catch {
            sqlite3_exec(database, "ROLLBACK", nil, nil, nil)
            throw error
        }
    }

    /// The number of rows of `table`, to check that every save landed.
    func count(_ table: String) throws -> Int { Int(try Self.scalar(database, "SELECT count(*) FROM \(table)")) ?? -1 }

    /// The content of `document`'s head version, to check that the last save of each document is its head.
    func headContent(of document: String) throws -> Data? {
        let statement = try Self.prepare(database, "SELECT content FROM versions JOIN heads ON heads.version = versions.id WHERE heads.document = ?1")
        defer { sqlite3_finalize(statement) }
        bind(document, at: 1, in: statement)
        guard sqlite3_step(statement) == SQLITE_ROW else { return nil }
        let length = Int(sqlite3_column_bytes(statement, 0))
        guard let bytes = sqlite3_column_blob(statement, 0) else { return Data() }
        return Data(bytes: bytes, count: length)
    }

    private func bind(_ text: String, at index: Int32, in statement: OpaquePointer) {
        // SQLITE_TRANSIENT: SQLite copies the text, whose Swift buffer lives only for this call.
        sqlite3_bind_text(statement, index, text, -1, unsafeBitCast(-1, to: sqlite3_destructor_type.self))
    }

    /// Runs a statement that returns no row, then resets it for its next use.
    private func step(_ statement: OpaquePointer) throws {
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        guard sqlite3_step(statement) == SQLITE_DONE else { throw BenchFailure("sqlite: \(String(cString: sqlite3_errmsg(database)))") }
    }

    private static func execute(_ database: OpaquePointer, _ sql: String) throws {
        guard sqlite3_exec(database, sql, nil, nil, nil) == SQLITE_OK else {
            throw BenchFailure("sqlite: \(sql): \(String(cString: sqlite3_errmsg(database)))")
        }
    }

    private static func prepare(_ database: OpaquePointer, _ sql: String) throws -> OpaquePointer {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(database, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw BenchFailure("sqlite: \(sql): \(String(cString: sqlite3_errmsg(database)))")
        }
        return statement
    }

    /// The first column of the first row `sql` returns, as text.
    private static func scalar(_ database: OpaquePointer, _ sql: String) throws -> String {
        let statement = try prepare(database, sql)
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW, let text = sqlite3_column_text(statement, 0) else {
            throw BenchFailure("sqlite: \(sql) returned no row")
        }
        return String(cString: text)
    }
}
