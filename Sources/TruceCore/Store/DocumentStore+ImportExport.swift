import Foundation
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
            let importing = Importing(access: access, author: try author(device), date: date, allowingFutureDate: allowingFutureDate)
            return try importing.run(source, progress: progress, saving: saving, cancellation: cancellation)
        }
    }

    /// `importDocuments` on the calling thread, not cancellable: for the benchmark, which times the work without the executor.
    package func importDocumentsOnCallingThread(from source: ImportSource, device: String?, date: Date) throws(TruceError) -> ImportReport {
        try Importing(access: access, author: author(device), date: date).run(source, progress: nil, saving: nil, cancellation: nil)
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
            try Exporting(access: access).run(to: path, versionAt: date, overwrite: overwrite, progress: progress, cancellation: cancellation)
        }
    }
}
