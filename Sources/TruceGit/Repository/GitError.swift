internal import CLibgit2

/// A libgit2 call failed; carries the message libgit2 gave for it.
///
/// An app reads what failed and why (`operation`, `message`); libgit2's own
/// codes stay inside the package, which decides from them.
package struct GitError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What Truce asked libgit2 to do, for example `create reference`.
    package let operation: String
    /// libgit2's return code (`GIT_ENOTFOUND`, `GIT_EMODIFIED`, …).
    package let code: Int32
    /// libgit2's error class (`GIT_ERROR_ODB`, …), 0 when libgit2 gave none.
    package let errorClass: Int32
    /// `git_error_last()`'s message, read right after the failing call.
    package let message: String

    /// What failed and why, with any URL's password removed.
    package var description: String { RemoteURL.redactingPasswords(in: "\(operation): \(message)") }

    /// True for `GIT_ENOTFOUND`.
    package var isNotFound: Bool { code == GIT_ENOTFOUND.rawValue }
    /// True for `GIT_EAMBIGUOUS`: an id prefix that more than one object starts with.
    package var isAmbiguous: Bool { code == GIT_EAMBIGUOUS.rawValue }
    /// True when a compare-and-swap lost: the reference moved or exists (`GIT_EMODIFIED`, `GIT_EEXISTS`).
    package var isConcurrentModification: Bool { code == GIT_EMODIFIED.rawValue || code == GIT_EEXISTS.rawValue }
    /// True when a configuration file could not be parsed (`GIT_ERROR_CONFIG`).
    package var isConfigurationError: Bool { errorClass == GIT_ERROR_CONFIG.rawValue }
    /// True when another writer holds the lock file (`GIT_ELOCKED`).
    package var isLocked: Bool {
        // libgit2 1.5 reports a held reflog lock as a plain error (-1); only its message tells.
        code == GIT_ELOCKED.rawValue || message.hasPrefix("failed to lock file")
    }

    /// Captures libgit2's last error for a call that just returned `code`.
    package static func last(_ operation: String, code: Int32) -> GitError {
        let message: String
        var errorClass: Int32 = 0
        if let error = git_error_last() {
            message = error.pointee.message.map { String(cString: $0) } ?? "unknown error"
            errorClass = error.pointee.klass
        } else {
            message = "libgit2 returned \(code)"
        }
        return GitError(operation: operation, code: code, errorClass: errorClass, message: message)
    }
}

/// Throws a `GitError` when a libgit2 call returned a negative code.
@discardableResult
package func check(_ code: Int32, _ operation: @autoclosure () -> String) throws(GitError) -> Int32 {
    if code < 0 { throw GitError.last(operation(), code: code) }
    return code
}
