import Foundation
internal import TruceGit
internal import TruceSaveLog

/// Everything that can go wrong in a Truce operation, in words a user can act on.
public enum TruceError: Error, Sendable, Equatable, LocalizedError, CustomStringConvertible, CustomDebugStringConvertible {
    /// The document key breaks a rule keys follow (UTF-8 path segments git can store, no `..`, no reserved names).
    case invalidKey(String, reason: String)
    /// The device name cannot be an author name.
    case invalidDeviceName(String, reason: String)
    /// No store at this path.
    case storeNotFound(String)
    /// The path exists but is not a Truce store.
    case notAStore(String, reason: String)
    /// `init` on a path that already holds something.
    case storeExists(String)
    /// No version with this id (or id prefix).
    case versionNotFound(String)
    /// The version exists but belongs to another document.
    case versionOfAnotherDocument(VersionID, requested: DocumentKey, actual: String)
    /// A version id prefix that more than one version starts with.
    case ambiguousVersion(String)
    /// The document has no version at all.
    case documentNotFound(DocumentKey)
    /// A deletion asked of a document whose base version is a deletion already.
    case alreadyDeleted(DocumentKey, version: VersionID)
    /// A date that is not ISO 8601.
    case invalidDate(String)
    /// A version date git cannot store exactly (see `Signature.representableDates`).
    case dateOutOfRange(Date)
    /// A date asked for a new version that runs more than a day ahead of this device's clock (`clock`), not forced.
    ///
    /// Pass `allowingFutureDate: true` (the CLI's `--allow-future-date`) to save it anyway.
    case dateTooFarAhead(Date, clock: Date)
    /// The store's config or attributes say something Truce cannot use.
    case invalidConfiguration(String)
    /// A routing rule `store.route(_:to:options:)` cannot write: a pattern, resolver name or option that git's formats cannot hold.
    case invalidRoute(String, reason: String)
    /// No resolver of that name is registered or defined as an external driver.
    case unknownResolver(String, source: String)
    /// An answer to a conflict point that does not fit the conflict.
    case invalidAnswer(String)
    /// `resolve` or `conflicts` on a document that has one head.
    case notInConflict(DocumentKey)
    /// `reopen` on a document whose heads hold no resolution.
    case nothingToReopen(DocumentKey)
    /// `restore` of a value no resolution of the document dropped, or that cannot be put back; the reason says which.
    case nothingToRestore(DocumentKey, reason: String)
    /// A resolver failed in a way that is neither a pass nor bad input.
    case resolverFailed(String, reason: String)
    /// A version's content is not what its resolver can read (JSON that does not parse, say).
    case malformedContent(DocumentKey, version: VersionID, reason: String)
    /// A change token that does not parse or is not from this store.
    case invalidToken(String, reason: String)
    /// A sync remote that does not exist, cannot be reached, or is not a store.
    case invalidRemote(String, reason: String)
    /// An expiry (`--expire`) that does not parse.
    case invalidExpiry(String)
    /// A folder to import from or export to that does not exist, is a file, or (for an export) is not empty.
    case invalidFolder(String, reason: String)
    /// An import stream that breaks its format, at a line.
    case malformedStream(line: Int, reason: String)
    /// Another writer held a lock for longer than Truce waits; the operation can be retried.
    case busy(String)
    /// The store or the file system failed underneath: what was being done, and what failed.
    case storeFailure(StoreFailure)
    /// The task running an async operation was cancelled; it stopped at a safe point, before publishing a batch.
    ///
    /// A `saveBatch`, `resolveAll` or a sync cancelled during its download
    /// leaves the store as it was; a sync cancelled while sending keeps what
    /// it adopted (whole), and the other side did not take our manifest.
    case cancelled

    /// What failed underneath a `storeFailure`: the operation and the reason git or the system gave.
    ///
    /// The message is libgit2's or the system's own, as `git` would print it;
    /// libgit2's error codes stay inside the package, which decides from them.
    public struct StoreFailure: Sendable, Equatable, CustomStringConvertible {
        /// What Truce was doing, for example `create reference`.
        public let operation: String
        /// Why it failed, in the words libgit2 or the system gave.
        public let message: String

        /// A failure of `operation` because of `message`, with any URL's password removed from both: the fields
        /// are public, so an app that shows them shows no password either.
        package init(operation: String, message: String) {
            self.operation = RemoteURL.redactingPasswords(in: operation)
            self.message = RemoteURL.redactingPasswords(in: message)
        }

        /// What failed and why.
        public var description: String { "\(operation): \(message)" }
    }

    /// A `storeFailure` carrying what a libgit2 call (or a system call beneath the git layer) said.
    static func storeFailure(_ error: GitError) -> TruceError {
        .storeFailure(StoreFailure(operation: error.operation, message: error.message))
    }

    /// A `storeFailure` carrying what the save log said.
    static func storeFailure(_ error: SaveLogError) -> TruceError {
        .storeFailure(StoreFailure(operation: error.operation, message: error.message))
    }

    /// True when the caller gave something wrong (exit code 2); false when the store failed (exit code 3).
    public var isBadInput: Bool {
        switch self {
        case .storeNotFound, .notAStore, .busy, .storeFailure, .resolverFailed, .cancelled: false
        default: true
        }
    }

    /// The message for people; a URL in it never shows its password (`https://user@host/x`, not `user:secret@`).
    public var errorDescription: String? { RemoteURL.redactingPasswords(in: unredactedDescription) }

    /// The same line: `print(error)` and `"\(error)"` show no URL's password, which the cases themselves hold.
    public var description: String { RemoteURL.redactingPasswords(in: unredactedDescription) }

    /// The same line, for `debugPrint` and `String(reflecting:)`.
    public var debugDescription: String { description }

    private var unredactedDescription: String {
        switch self {
        case .invalidKey(let key, let reason): "invalid document key \(Self.quoted(key)): \(reason)"
        case .invalidDeviceName(let name, let reason): "invalid device name \(Self.quoted(name)): \(reason)"
        case .storeNotFound(let path): "no store at \(path) (create one with 'truce init')"
        case .notAStore(let path, let reason): "\(path) is not a Truce store: \(reason)"
        case .storeExists(let path): "\(path) already exists; a store is created only in a new or empty directory"
        case .versionNotFound(let id): "no version \(Self.quoted(id)) in this store"
        case .versionOfAnotherDocument(let id, let requested, let actual):
            "version \(id.short) belongs to \(Self.quoted(actual)), not to \(Self.quoted(requested.rawValue))"
        case .ambiguousVersion(let id): "version id \(Self.quoted(id)) is ambiguous; give more digits"
        case .documentNotFound(let key): "no document \(Self.quoted(key.rawValue)) in this store"
        case .alreadyDeleted(let key, let version): "\(Self.quoted(key.rawValue)) is already deleted in version \(version.short)"
        case .invalidDate(let text): "invalid date \(Self.quoted(text)): expected ISO 8601 such as 2026-11-30T20:15:00Z"
        case .dateOutOfRange(let date):
            "date \(ISO8601.format(date)) is outside what git stores exactly: \(ISO8601.format(Signature.representableDates.lowerBound)) "
                + "to \(ISO8601.format(Signature.representableDates.upperBound))"
        case .dateTooFarAhead(let date, let clock):
            "date \(ISO8601.format(date)) is more than a day ahead of this device's clock (\(ISO8601.format(clock))): "
                + "check the date and the clock, or save it anyway with --allow-future-date (allowingFutureDate: true)"
        case .invalidConfiguration(let what): "invalid configuration: \(what)"
        case .invalidRoute(let pattern, let reason): "cannot route \(Self.quoted(pattern)): \(reason)"
        case .unknownResolver(let name, let source):
            "unknown resolver \(Self.quoted(name)) (\(source)): register it in the resolvers the store is opened with "
                + "(resolvers:) or the call is given (registry:), or define merge.\(name).driver in the store's config"
        case .invalidAnswer(let what): what
        case .notInConflict(let key): "\(Self.quoted(key.rawValue)) is not in conflict"
        case .nothingToReopen(let key): "nothing to reopen: no head of \(Self.quoted(key.rawValue)) is a resolution"
        case .nothingToRestore(let key, let reason): "cannot restore in \(Self.quoted(key.rawValue)): \(reason)"
        case .resolverFailed(let name, let reason): "resolver \(Self.quoted(name)) failed: \(reason)"
        case .malformedContent(let key, let version, let reason): "version \(version.short) of \(Self.quoted(key.rawValue)) \(reason)"
        case .invalidToken(let token, let reason): "invalid change token \(Self.quoted(token)): \(reason)"
        case .invalidRemote(let remote, let reason): "cannot sync with \(Self.quoted(remote)): \(reason)"
        case .invalidExpiry(let text): "invalid expiry \(Self.quoted(text)): expected now, never, or a count and a unit such as 2.weeks or 3.days"
        case .invalidFolder(let path, let reason): "cannot use folder \(Self.quoted(path)): \(reason)"
        case .malformedStream(let line, let reason): "malformed import stream at line \(line): \(reason)"
        case .busy(let what): "the store is busy (\(what)); try again"
        case .storeFailure(let error): "store failure: \(error.description)"
        case .cancelled: "the operation was cancelled"
        }
    }

    /// Quotes user text for a one-line message, escaping what would break the line.
    static func quoted(_ text: String) -> String {
        var out = "'"
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            case "\0": out += "\\0"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                out += String(format: "\\x%02X", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        let limit = 120
        if out.count > limit { out = String(out.prefix(limit)) + "…" }
        return out + "'"
    }
}
