import Foundation

extension StructuredMerge {
    /// What merging three plain files by structure gave: the result, and how many places conflict.
    package struct FileMergeResult: Sendable {
        /// The merged document; where places conflict, JSON gets git's conflict markers around just those members,
        /// a property list (which markers would break) stays as the current file was.
        package let content: Data
        package let conflictCount: Int
    }

    /// Merges `other` into `current` against `base` by structure, as a git merge driver does.
    ///
    /// The kind comes from `path`'s extension (`.json`, `.plist`), else from the
    /// content. Throws `StructuredInputError` when a file cannot be merged by
    /// structure; then a line merge is the caller's fallback.
    package static func mergeFiles(
        base: Data, current: Data, other: Data, path: String?, rules: MergeRules = MergeRules(),
        markerSize: Int = 7, oursLabel: String = "ours", theirsLabel: String = "theirs"
    )
        throws(StructuredInputError) -> FileMergeResult
    {
        let kind = StructuredDocument.kind(ofPath: path, sample: current)
        func read(_ data: Data, _ role: String) throws(StructuredInputError) -> StructuredDocument {
            do { return try StructuredDocument.read(data, kind: kind) } catch { throw StructuredInputError("the \(role) file \(error.description)") }
        }
        let baseDocument = try read(base, "base"), currentDocument = try read(current, "current"), otherDocument = try read(other, "other")
        var merge = TreeMerge(rules: rules)
        let merged = merge.merge(base: baseDocument.root, ours: currentDocument.root, theirs: otherDocument.root)
        guard let merged else { throw StructuredInputError("the merge removed the whole document") }
        if !merge.conflicts.isEmpty, case .propertyList = currentDocument.format {
            return FileMergeResult(content: current, conflictCount: merge.conflicts.count)
        }
        let markers = JSONPrinter.Markers(size: markerSize, oursLabel: oursLabel, theirsLabel: theirsLabel)
        if merge.conflicts.isEmpty {
            return FileMergeResult(content: try currentDocument.written(merged), conflictCount: 0)
        }
        guard case .json(let layout) = currentDocument.format else { preconditionFailure("property lists returned above") }
        return FileMergeResult(content: JSONPrinter.document(merged, layout: layout, markers: markers), conflictCount: merge.conflicts.count)
    }
}
