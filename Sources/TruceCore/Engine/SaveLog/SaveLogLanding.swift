import Foundation
internal import TruceGit
internal import TruceSaveLog

extension StoreEngine {
    /// Lands every save the log holds in git, as one write: one pack, the heads, one journal entry; then empties the log.
    ///
    /// Runs under the log's exclusive lock, so no save is appended between the
    /// reading and the emptying. A crash before the log is emptied leaves its
    /// records, which the next checkpoint applies again: a version whose head
    /// already landed is skipped, so nothing is published or journaled twice.
    /// Returns the changes that landed.
    @discardableResult
    func land(_ log: SaveLog) throws -> [Change] {
        var landed: [Change] = []
        try log.drain { records in
            let saves = try records.map { record in
                guard let save = LoggedSave(decoding: record.payload) else { throw SaveLogOverlay.unreadable(record.sequence, in: log) }
                return save
            }
            var transaction = try WriteSession(in: self, objects: .packed)
            transaction.compression = .stored
            var heads: [DocumentKey: [PendingHead]] = [:]
            let pendingIDs = Set(saves.map(\.head.id))
            for save in saves where try !hasLanded(save) {
                for object in save.objects { try transaction.insert(object) }
                // A save whose base was a save that failed (an I/O error) was refused too: its parent is nowhere.
                guard try save.head.replacing.allSatisfy({ try transaction.containsCommit($0.objectID) }) else { continue }
                var absorbed = save.head.replacing
                // A later save of the same document replaces an earlier pending one: only the later becomes a head.
                heads[save.head.key, default: []].removeAll { earlier in
                    guard save.head.replacing.contains(earlier.id) else { return false }
                    absorbed += earlier.replacing
                    return true
                }
                // Pending versions are no heads in git yet: there is nothing of theirs to replace.
                let replacing = absorbed.filter { !pendingIDs.contains($0) }
                heads[save.head.key, default: []].append(
                    PendingHead(key: save.head.key, id: save.head.id, replacing: Array(Set(replacing)).sorted(), message: save.head.message))
                transaction.record(save.change)
            }
            for key in heads.keys.sorted() { for head in heads[key]! { transaction.publish(head) } }
            _ = try transaction.commit()
            landed = transaction.changes
        }
        return landed
    }

    /// True when `save`'s version is in the store already and one of its document's heads reaches it: an earlier
    /// landing landed it and was killed before emptying the log.
    func hasLanded(_ save: LoggedSave) throws -> Bool {
        let id = save.head.id.objectID
        // Without rescanning the packs for each save: a killed checkpoint's pack is known to a handle opened since.
        guard try repository.containsObjectWithoutRescan(id) else { return false }
        return try headReferences(of: save.head.key).contains { try $0.target == id || repository.isDescendant($0.target, of: id) }
    }
}
