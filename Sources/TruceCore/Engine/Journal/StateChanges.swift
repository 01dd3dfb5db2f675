import Foundation
internal import TruceGit

extension StoreEngine {
    /// The events for `changes` (oldest first, as read from the journal), each with the document's states around it.
    ///
    /// The state after a document's newest change is read from its heads.
    /// Going back one change at a time, the version it wrote stops being a
    /// head and its parents become heads again: that is the state before it.
    /// A writer that landed after the journal was read shows in the newest
    /// state only, and its own change follows in the next read.
    func stateChanges(for changes: [Change]) throws -> [DocumentStateChange] {
        var indicesByKey: [DocumentKey: [Int]] = [:]
        for (index, change) in changes.enumerated() { indicesByKey[change.key, default: []].append(index) }
        var events = [DocumentStateChange?](repeating: nil, count: changes.count)
        for (key, indices) in indicesByKey {
            var heads = Set(try headReferences(of: key).map(\.target))
            // The heads are read after the journal: a later save built on one of these versions may have landed since,
            // its entry not read yet. Such a head is rewound to its parents first, so the replay starts where the batch ended.
            let batch = Set(indices.map { changes[$0].version.objectID })
            var rewinding = true
            while rewinding {
                rewinding = false
                for head in heads where !batch.contains(head) {
                    guard try batch.contains(where: { try repository.isDescendant(head, of: $0) }) else { continue }
                    heads.remove(head)
                    heads.formUnion(try repository.readCommit(head).parents)
                    rewinding = true
                }
            }
            var after = try documentVersions(of: key, amongCandidates: Array(heads)).state
            for index in indices.reversed() {
                let change = changes[index]
                // A version pruned since is simply gone: its parents are unknown, so the replay keeps the rest.
                var dropped = 0
                if heads.remove(change.version.objectID) != nil, let commit = try? repository.readCommit(change.version.objectID) {
                    heads.formUnion(commit.parents)
                    // The commit is read anyway: what a resolution dropped costs no other read.
                    if change.kind == .resolution, case .section(let section) = DecisionsSection.reading(commit.message) {
                        dropped = section.droppedValueCount
                    }
                }
                let before = try documentVersions(of: key, amongCandidates: Array(heads)).state
                events[index] = DocumentStateChange(change: change, previous: before, current: after, droppedValueCount: dropped)
                after = before
            }
        }
        return events.compactMap { $0 }
    }
}
