import Foundation
internal import TruceGit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writing the current version of every document (or the one current at a date) into a folder as files, never
/// through a symbolic link.
struct Exporting: Sendable {
    let access: StoreAccess

    /// Writes each document's chosen version into the folder `path`, creating it; an existing one must be empty unless
    /// `overwrite`. Deleted documents, and documents with no version yet at `date`, are not written. `cancellation`
    /// stops it between two files; the files written stay.
    func run(
        to path: String, versionAt date: Date?, overwrite: Bool, progress: (@Sendable (Int, Int) -> Void)?, cancellation: Cancellation?
    ) throws(TruceError) -> ExportReport {
        try FileTree.checkExportFolder(path, overwrite: overwrite)
        if FileTree.isInside(path, access.path) { throw .invalidFolder(path, reason: "it is the store or inside it") }
        let chosen = try access.read { try $0.exportChoices(versionAt: date) }
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw .invalidFolder(path, reason: "cannot create it: \(error.localizedDescription)")
        }
        let root: Int32
        do { root = try FileTree.openFolder(path) } catch { throw .invalidFolder(path, reason: error.reason) }
        defer { close(root) }
        var written = 0, deleted = 0
        var failed: [ImportReport.PathIssue] = []
        for (done, document) in chosen.enumerated() {
            try cancellation?.check()
            if done % 256 == 0 { progress?(done, chosen.count) }
            guard let version = document.current, let content = try access.read({ try $0.contents(of: version) }) else {
                if document.current != nil { deleted += 1 }
                continue
            }
            do {
                try FileTree.write(content, to: document.key.segments.map { Array($0.utf8) }, below: root)
                written += 1
            } catch {
                failed.append(ImportReport.PathIssue(path: document.key.rawValue, reason: error.reason))
            }
        }
        progress?(chosen.count, chosen.count)
        return ExportReport(written: written, deleted: deleted, inConflict: chosen.filter(\.inConflict).map(\.key), failed: failed)
    }
}
