internal import CLibgit2

/// The value of a gitattributes attribute for one path, as `git check-attr` reports it.
package enum AttributeValue: Sendable, Equatable, CustomStringConvertible {
    case unspecified
    case set
    case unset
    case value(String)

    package var description: String {
        switch self {
        case .unspecified: "unspecified"
        case .set: "set"
        case .unset: "unset"
        case .value(let text): text
        }
    }
}

extension Repository {
    /// Looks `name` up for `path` in the repository's attribute files (`info/attributes` for a bare store).
    package func attribute(_ name: String, for path: String) throws(GitError) -> AttributeValue {
        var value: UnsafePointer<CChar>?
        try check(git_attr_get(&value, handle, UInt32(GIT_ATTR_CHECK_FILE_THEN_INDEX), path, name), "read attribute \(name) of \(path)")
        switch git_attr_value(value) {
        case GIT_ATTR_VALUE_TRUE: return .set
        case GIT_ATTR_VALUE_FALSE: return .unset
        case GIT_ATTR_VALUE_STRING: return .value(String(cString: value!))
        default: return .unspecified
        }
    }
}
