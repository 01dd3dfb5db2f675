internal import TruceGit

/// What the package's tests watch and steer in a store, given when it is opened (`DocumentStore.open(at:…instrumentation:)`):
/// the work counters and the fault points.
///
/// The product reads plainly: it counts and reaches fault points through the
/// git layer's `Instrumentation`, one atomic add or one comparison each, and
/// knows nothing else of tests. Not public: adopters never see it.
package final class StoreInstrumentation: Sendable {
    let counters: Instrumentation

    /// Counts, and pauses for up to a minute the first time the process reaches the fault point `pausePoint` (nil: never);
    /// a sync receives `receiveBatchSize` listed heads at a time, and checks a first sync's batch of at least
    /// `fewestDividedOnTwoThreads` heads, or a local push reads at least that many commits, on two threads.
    package init(
        pausingAt pausePoint: String? = nil, receiveBatchSize: Int = 1 << 17, indexSnapshotFloor: Int = 100,
        fewestDividedOnTwoThreads: Int = 4096
    ) {
        counters = Instrumentation(
            pausingAt: pausePoint, receiveBatchSize: receiveBatchSize, indexSnapshotFloor: indexSnapshotFloor,
            fewestDividedOnTwoThreads: fewestDividedOnTwoThreads)
    }

    init(_ counters: Instrumentation) { self.counters = counters }

    /// References listing calls have returned: a lookup reads one document's references, not the whole store's.
    package var referencesListed: Int { counters.referencesListed }
    /// Commits read: a cost follows the changes, not the store.
    package var commitsRead: Int { counters.commitsRead }
    /// Listings of one document's heads: a save lists its document's once.
    package var documentHeadListings: Int { counters.documentHeadListings }
    /// Read and write sessions opened, each of which looks at the save log once.
    package var sessionsOpened: Int { counters.sessionsOpened }
    /// `packed-refs` records reference lookups looked at: a binary search, not a scan.
    package var packedRecordsRead: Int { counters.packedRecordsRead }
    /// Loose object files a sync's quarantine looked for: none for objects read from packs.
    package var looseObjectLooks: Int { counters.looseObjectLooks }
    /// Objects read raw, or their header read, through libgit2 because no pack read in place held them.
    package var readsThroughLibgit2: Int { counters.readsThroughLibgit2 }
    /// Heads a first sync's checks passed or refused on a second thread.
    package var headsCheckedOnASecondThread: Int { counters.headsCheckedOnASecondThread }
    /// Commits and trees a local push's walk, or the dating of a first manifest, read on a second thread.
    package var objectsReadOnASecondThread: Int { counters.objectsReadOnASecondThread }

    /// Sets what runs between listing loose references and reading them (nil: nothing): where a test plays the writer
    /// a reader races.
    package func afterListingLooseReferences(_ hook: (@Sendable () -> Void)?) { counters.afterListingLooseReferences(hook) }

    /// Sets what runs between a sync's receive and its push to a hub (nil: nothing): where a test plays the replica that
    /// pushes first.
    package func beforePushing(_ hook: (@Sendable () -> Void)?) { counters.beforePushing(hook) }
}
