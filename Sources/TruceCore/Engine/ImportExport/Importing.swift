import Foundation
internal import TruceGit

/// Saving a folder's files or a stream's records as documents: in batches of `ImportReading.documentsPerBatch`, in key
/// order, each batch all or nothing, versions only for what changed.
struct Importing: Sendable {
    let access: StoreAccess
    /// The device the versions are saved by, and their date.
    let author: String
    let date: Date
    /// Whether a `date` more than a day ahead of this clock is taken.
    var allowingFutureDate = false

    /// Saves every entry of `source` as a document by `author`, dated `date`, skipping those whose current version
    /// holds the same bytes; a file that cannot be read now is refused and the rest are imported.
    ///
    /// `progress` hears (files read, files in all) while reading, `saving`
    /// (versions written, versions to write) while saving, counted across
    /// batches of at most what is left. `cancellation` stops it before the
    /// next batch is written, keeping the batches saved.
    func run(
        _ source: ImportSource, progress: (@Sendable (Int, Int) -> Void)?, saving: (@Sendable (Int, Int) -> Void)?, cancellation: Cancellation?,
        documentsPerBatch: Int = ImportReading.documentsPerBatch
    ) throws(TruceError) -> ImportReport {
        try HybridDates.checkNotFarAhead(date, allowing: allowingFutureDate)
        var refused = source.refused
        let order = source.positionsInKeyOrder()
        var documents = 0
        var imported = KeyedVersions()
        for start in stride(from: 0, to: order.count, by: max(documentsPerBatch, 1)) {
            let batch = order[start..<min(start + documentsPerBatch, order.count)]
            let contents = try ImportReading.read(batch, of: source, refusing: &refused, progress: progress, total: order.count)
            documents += contents.count
            try cancellation?.check()
            let changed = try access.read { session in try session.entriesNotHeld(contents) }
            // Counted across batches, of at most what is left: documents found unchanged later lower the total.
            let savedBefore = imported.count, left = order.count - batch.endIndex
            let counted = saving.map { saving in { @Sendable done, total in saving(savedBefore + done, savedBefore + total + left) } }
            let ids = try access.saveBatch(
                changed.map { BatchSave(key: $0.key, content: $0.content, device: author, date: date) }, author: author,
                allowingFutureDates: true, cancellation: cancellation, progress: counted)
            for (entry, id) in zip(changed, ids) { imported.append(entry.key, id) }
        }
        return ImportReport(
            documents: documents, unchanged: documents - imported.count, refused: refused, skipped: source.skipped, imported: imported)
    }
}
