import Foundation
internal import TruceGit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Importing documents from a folder or a stream, and exporting them into a folder.
extension DocumentStore {
    /// Saves every entry of `source` as a document, in batches as `saveBatch` writes them, skipping those already
    /// current.
    ///
    /// A batch holds at most 131,072 documents, in key order, so that memory
    /// follows the batch and not the source: a source up to that size is
    /// saved all at once or not at all, as one `saveBatch`. A larger one is
    /// saved batch by batch, each all or nothing. Cancelling the task stops it
    /// before the next batch is written, and keeps the batches saved; an
    /// import of the same source again saves only what they did not.
    ///
    /// Each document's new version is based on its current version; a
    /// document whose current version holds the same bytes gets none, so
    /// importing a folder again after edits writes versions only for the
    /// files that changed. A file that cannot be read now (it vanished, became
    /// a link, or is unreadable) is refused and the rest are imported.
    /// `progress` is called with (files read, files in all) while reading,
    /// and `saving` with (versions written, versions to write) while saving.
    /// The versions are dated as `save` dates one; a `date` more than a day
    /// ahead of this device's clock is refused unless `allowingFutureDate`.
    ///
    /// Unlabelled so that it is not an `async` overload of 0.1.0's synchronous
    /// `importDocuments(from:device:date:progress:)`.
    public func importDocuments(
        _ source: ImportSource, device: String? = nil, date: Date = Date(), allowingFutureDate: Bool = false,
        progress: (@Sendable (Int, Int) -> Void)? = nil, saving: (@Sendable (_ done: Int, _ total: Int) -> Void)? = nil
    ) async throws(TruceError) -> ImportReport {
        try await BlockingExecutor.run { [self] (cancellation) throws(TruceError) in
            try importDocuments(
                from: source, device: device, date: date, allowingFutureDate: allowingFutureDate, progress: progress, saving: saving,
                cancellation: cancellation)
        }
    }

    /// `importDocuments` on the calling thread, not cancellable: for the benchmark, which times the work without the executor.
    package func importDocumentsOnCallingThread(from source: ImportSource, device: String?, date: Date) throws(TruceError) -> ImportReport {
        try importDocuments(from: source, device: device, date: date, progress: nil, cancellation: nil)
    }

    /// `importDocuments` on the calling thread, in batches of `documentsPerBatch`.
    func importDocuments(
        from source: ImportSource, device: String?, date: Date, allowingFutureDate: Bool = false,
        progress: (@Sendable (Int, Int) -> Void)?, saving: (@Sendable (Int, Int) -> Void)? = nil, cancellation: Cancellation?,
        documentsPerBatch: Int = ImportReading.documentsPerBatch
    ) throws(TruceError) -> ImportReport {
        let author = try author(device)
        try HybridDates.checkNotFarAhead(date, allowing: allowingFutureDate)
        var refused = source.refused
        let entries = ImportReading.inKeyOrder(source)
        var documents = 0
        var versions: [ImportReport.ImportedVersion] = []
        for start in stride(from: 0, to: entries.count, by: max(documentsPerBatch, 1)) {
            let batch = entries[start..<min(start + documentsPerBatch, entries.count)]
            let contents = try ImportReading.read(batch, of: source, refusing: &refused, progress: progress, total: entries.count)
            documents += contents.count
            try cancellation?.check()
            let changed = try withEngine { engine in
                try contents.filter { key, content in try !engine.currentVersion(of: key, holds: content) }
            }
            // Counted across batches, of at most what is left: documents found unchanged later lower the total.
            let savedBefore = versions.count, left = entries.count - batch.endIndex
            let counted = saving.map { saving in { @Sendable done, total in saving(savedBefore + done, savedBefore + total + left) } }
            let ids = try saveBatch(
                changed.map { BatchSave(key: $0.key, content: $0.content, device: author, date: date) }, allowingFutureDates: true,
                cancellation: cancellation, progress: counted)
            versions += zip(changed, ids).map { ImportReport.ImportedVersion(key: $0.0.key, version: $0.1) }
        }
        return ImportReport(
            documents: documents, newVersions: versions.count, unchanged: documents - versions.count,
            refused: refused, skipped: source.skipped, versions: versions)
    }

    /// Writes the current version of every document into the folder `path` as files, creating folders.
    ///
    /// With `date`, each document's version current at that date instead:
    /// among its versions whose modification (author) date is not after
    /// `date`, those that no other such version descends from are its heads
    /// then, and the current-version rule picks one. Deleted documents (and
    /// documents with no version yet at `date`) are not written. The folder is
    /// created when missing; an existing one must be empty unless
    /// `overwrite`, which replaces files of the same name and leaves the
    /// others. Nothing is ever written through a symbolic link. Cancelling
    /// the task stops it between two files; the files written stay.
    /// `progress` is called with (documents done, documents in all).
    ///
    /// Labelled `into:` so that it is not an `async` overload of 0.1.0's
    /// synchronous `exportDocuments(to:versionAt:overwrite:)`.
    public func exportDocuments(
        into path: String, versionAt date: Date? = nil, overwrite: Bool = false, progress: (@Sendable (Int, Int) -> Void)? = nil
    ) async throws(TruceError) -> ExportReport {
        try await BlockingExecutor.run { [self] (cancellation) throws(TruceError) in
            try exportDocuments(to: path, versionAt: date, overwrite: overwrite, progress: progress, cancellation: cancellation)
        }
    }

    /// `exportDocuments` on the calling thread.
    func exportDocuments(
        to path: String, versionAt date: Date?, overwrite: Bool, progress: (@Sendable (Int, Int) -> Void)? = nil, cancellation: Cancellation?
    ) throws(TruceError) -> ExportReport {
        try FileTree.checkExportFolder(path, overwrite: overwrite)
        if FileTree.isInside(path, self.path) { throw .invalidFolder(path, reason: "it is the store or inside it") }
        let chosen = try withEngine { try $0.exportChoices(versionAt: date) }
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
            guard let version = document.current, let content = try contents(of: version) else {
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
