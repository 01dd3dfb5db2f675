import Foundation
import TruceCore

extension StructuredMerge {
    /// What merging three plain files by structure gave: the result, and how many places conflict.
    package struct FileMergeResult: Sendable {
        /// The merged document; where places conflict, JSON gets git's conflict markers around just those members,
        /// a property list (which markers would break) stays as the current file was.
        package let content: Data
        package let conflictCount: Int
    }

    /// How a file merge labels and draws its conflict markers.
    package struct FileMarkers: Sendable {
        package var size = 7
        package var oursLabel = "ours"
        package var baseLabel = "base"
        package var theirsLabel = "theirs"
        /// True shows the base's value too, as git's `diff3` and `zdiff3` conflict styles do.
        package var showsBase = false

        package init() {}
    }

    /// Merges `other` into `current` against `base` by structure, as a git merge driver does.
    ///
    /// When a side left the file as the base has it, the result is the other
    /// side's file, byte for byte, as in git; otherwise see
    /// `mergeByStructure(base:current:other:path:rules:markers:)`. Throws
    /// `StructuredInputError` when a file cannot be merged by structure; then a
    /// line merge is the caller's fallback.
    ///
    /// `fieldRules` are the merge rules of the file's fields (`FieldRules`); with two versions and no dates, `lww`
    /// takes the current side where both changed a field. A rule that cannot apply throws `TruceError`.
    package static func mergeFiles(
        base: Data, current: Data, other: Data, path: String?, rules: MergeRules = MergeRules(), fieldRules: [FieldRule] = [],
        markers: FileMarkers = FileMarkers()
    ) throws -> FileMergeResult {
        if current == other || base == other, fieldRules.isEmpty { return FileMergeResult(content: current, conflictCount: 0) }
        if base == current, fieldRules.isEmpty { return FileMergeResult(content: other, conflictCount: 0) }
        return try mergeByStructure(base: base, current: current, other: other, path: path, rules: rules, fieldRules: fieldRules, markers: markers)
    }

    /// Merges `other` into `current` against `base` by structure, whatever the bytes.
    ///
    /// The kind comes from `path`'s extension (`.json`, `.plist`), else from
    /// the content. JSON keeps every byte of what no side changed: the current
    /// file's layout, spacing, number spelling and member order, and the other
    /// side's bytes for what it changed (`JSONPrinter`). Property lists are
    /// written anew by Foundation (XML) or in key order (binary).
    package static func mergeByStructure(
        base: Data, current: Data, other: Data, path: String?, rules: MergeRules = MergeRules(), fieldRules: [FieldRule] = [],
        markers: FileMarkers = FileMarkers()
    ) throws -> FileMergeResult {
        let kind = StructuredDocument.kind(ofPath: path, sample: current)
        func read(_ data: Data, _ role: String) throws(StructuredInputError) -> StructuredDocument {
            do { return try StructuredDocument.read(data, kind: kind) } catch { throw StructuredInputError("the \(role) file \(error.description)") }
        }
        let baseDocument = try read(base, "base"), otherDocument = try read(other, "other")
        let currentDocument = try read(current, "current").edges(following: otherDocument, base: baseDocument)
        // Plain files have no dates: the current side is the later one, for `lww`.
        let fields = try FieldRulePass(
            rules: fieldRules, base: baseDocument.root,
            heads: [
                FieldRulePass.Head(value: currentDocument.root, date: Date(timeIntervalSince1970: 1), id: "current"),
                FieldRulePass.Head(value: otherDocument.root, date: Date(timeIntervalSince1970: 0), id: "other"),
            ])
        var merge = TreeMerge(rules: rules, fields: fields)
        let merged = merge.merge(base: baseDocument.root, ours: currentDocument.root, theirs: otherDocument.root)
        guard let merged else { throw StructuredInputError("the merge removed the whole document") }
        if !merge.conflicts.isEmpty, case .propertyList = currentDocument.format {
            return FileMergeResult(content: current, conflictCount: merge.conflicts.count)
        }
        if merge.conflicts.isEmpty {
            return FileMergeResult(content: try currentDocument.written(merged), conflictCount: 0)
        }
        guard case .json(let layout) = currentDocument.format else { preconditionFailure("property lists returned above") }
        let printed = JSONPrinter.Markers(
            size: markers.size, oursLabel: markers.oursLabel, baseLabel: markers.baseLabel, theirsLabel: markers.theirsLabel,
            showsBase: markers.showsBase)
        return FileMergeResult(content: JSONPrinter.document(merged, layout: layout, markers: printed), conflictCount: merge.conflicts.count)
    }
}
