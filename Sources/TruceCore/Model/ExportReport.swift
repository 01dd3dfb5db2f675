import Foundation

/// What an export wrote: how many files, which documents were in conflict, what could not be written.
public struct ExportReport: Sendable, Codable {
    /// Files written, one per document whose (chosen) version holds content.
    public let written: Int
    /// Documents whose version is a deletion: not written.
    public let deleted: Int
    /// Documents that were in conflict (at the date asked, if any): written as their current version.
    public let inConflict: [DocumentKey]
    /// Documents whose file could not be written (a file and a folder of one name, a link in the way), with the reason.
    public let failed: [ImportReport.PathIssue]
}
