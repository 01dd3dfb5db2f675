import Foundation
internal import TruceGit

/// A head another store listed, with the ref that listed it; `legacy` for a head ref (a Truce store's own, or a hub's
/// from before manifests), whose name must match its version.
struct IncomingCandidate {
    let id: ObjectID
    let reference: String
    let legacy: Bool
    /// The manifest of another replica that listed it, which this replica's next manifest may list in its place.
    var via: ObjectID? = nil
}

/// The heads a sync's listing found, in the order listed, each once, stored as their ids and the runs of them one
/// reference listed: a first sync of a million documents lists a million heads from a few manifests, and a
/// reference, a manifest and a flag beside every id took 72 MB where the ids take 20.
struct IncomingCandidates: RandomAccessCollection {
    /// What every head of one run shares: the reference that listed them, and the manifest they came by.
    private struct Run {
        let start: Int
        let reference: String
        let legacy: Bool
        let via: ObjectID?
    }

    private var ids: [ObjectID] = []
    private var runs: [Run] = []
    /// The ids manifests listed so far, to list each head once: a head two manifests list is checked and adopted by
    /// the first. Head refs (`legacy`) are listed however often they repeat, as each names its own ref, and after
    /// every manifest's heads. The set goes once the listing is done.
    private var listed: Set<ObjectID>? = []
    /// The heads head refs name: the only ones listed again after a manifest listed them.
    private var namedByHeadReferences = Set<ObjectID>()

    var startIndex: Int { 0 }
    var endIndex: Int { ids.count }

    subscript(position: Int) -> IncomingCandidate {
        // The last run that starts at or before `position`.
        var low = 0, high = runs.count
        while high - low > 1 {
            let middle = (low + high) / 2
            if runs[middle].start <= position { low = middle } else { high = middle }
        }
        let run = runs[low]
        return IncomingCandidate(id: ids[position], reference: run.reference, legacy: run.legacy, via: run.via)
    }

    /// Adds the heads one manifest chain lists (`legacy` false), skipping any listed before, or one head ref.
    mutating func append(contentsOf heads: [ObjectID], reference: String, legacy: Bool, via: ObjectID?) {
        let start = ids.count
        if legacy {
            ids += heads
            namedByHeadReferences.formUnion(heads)
        } else {
            precondition(namedByHeadReferences.isEmpty, "a manifest's heads are listed before any head ref")
            listed?.reserveCapacity(start + heads.count)
            for id in heads where listed?.insert(id).inserted ?? true { ids.append(id) }
        }
        guard ids.count > start else { return }
        runs.append(Run(start: start, reference: reference, legacy: legacy, via: via))
    }

    /// Whether a head ref names `id`, which may then be listed twice.
    func headReferencesName(_ id: ObjectID) -> Bool { namedByHeadReferences.contains(id) }

    /// Lets go of what kept repeats out: nothing more is listed.
    mutating func finish() { listed = nil }
}
