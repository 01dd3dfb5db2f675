import Foundation
import Synchronization

/// What the test suite watches and steers in a store, given once when the store is opened: the work counters and
/// the fault points.
///
/// Production code reads plainly: it calls `count…` and `reach(_:)`, which
/// cost one atomic add or one comparison, and nothing else in the product
/// knows that tests exist. A store opened without one gets `Instrumentation()`,
/// which counts and never pauses.
package final class Instrumentation: Sendable {
    /// References returned by listing calls: a lookup reads one document's references, not the whole store's.
    private let listed = Atomic<Int>(0)
    /// Commits read: a cost follows the changes, not the store.
    private let commits = Atomic<Int>(0)
    /// One document's heads listed (its folder of head refs, and its lines of `packed-refs`): a save lists them once.
    private let headListings = Atomic<Int>(0)
    /// Read and write sessions opened on a store, each of which looks at the save log once.
    private let sessions = Atomic<Int>(0)
    /// `packed-refs` records looked at by reference lookups: a binary search, not a scan.
    private let packedRecords = Atomic<Int>(0)
    /// Loose object files a sync's quarantine looked for: objects read from packs, its own or a borrowed store's, need none.
    private let looseLooks = Atomic<Int>(0)
    /// Objects read raw, or their header read, through libgit2 because no pack read in place (`PackEntries`) held them.
    private let libgit2Reads = Atomic<Int>(0)
    /// Objects a local push asked of the packs its own earlier batches wrote (`HeldObjects`): only those its filter of
    /// them may hold.
    private let writtenPackLooks = Atomic<Int>(0)
    /// Heads a sync's checks passed or refused on a second thread (`fewestDividedOnTwoThreads`).
    private let secondThreadChecks = Atomic<Int>(0)
    /// Commits and trees a local push's walk, or the dating of a first manifest, read on a second thread.
    private let secondThreadReads = Atomic<Int>(0)
    /// The fault point where this process stops, so that a test can kill it exactly there.
    private let pausePoint: String?
    private let paused = Atomic<Bool>(false)
    /// Called between listing loose references and reading them: where a test plays the writer a reader races.
    private let listingHook = Mutex<(@Sendable () -> Void)?>(nil)
    /// Called between a sync's receive and its push: where a test plays the replica that pushes first.
    private let pushHook = Mutex<(@Sendable () -> Void)?>(nil)
    /// Called on a spill's own thread before it writes its pack (`BackgroundPackWriter`): where a test holds the write.
    private let spillHook = Mutex<(@Sendable () -> Void)?>(nil)

    /// How many listed heads a sync's receive checks, admits and adopts at a time: its memory follows this, not the
    /// number of documents a sync brings (the size of an import's batch). Tests make it small to see a sync in batches.
    package let receiveBatchSize: Int
    /// The fewest manifests a hub index's snapshot counts as listing: a new one is written once the chain since the
    /// last lists this many or as many as it listed. Tests make it small to see an index start again.
    package let indexSnapshotFloor: Int

    /// The fewest heads of a first sync's batch whose checks, or commits of a local push whose reads, are divided
    /// between two threads: below it a second thread's setup costs more than it saves. Tests make it small to see the
    /// division with a few heads.
    package let fewestDividedOnTwoThreads: Int

    /// Counts, and pauses for up to a minute the first time the process reaches `pausePoint` (nil: never).
    package init(
        pausingAt pausePoint: String? = nil, receiveBatchSize: Int = 1 << 17, indexSnapshotFloor: Int = 100,
        fewestDividedOnTwoThreads: Int = 4096
    ) {
        self.pausePoint = pausePoint
        self.receiveBatchSize = max(receiveBatchSize, 1)
        self.indexSnapshotFloor = max(indexSnapshotFloor, 1)
        self.fewestDividedOnTwoThreads = max(fewestDividedOnTwoThreads, 2)
    }

    package var referencesListed: Int { listed.load(ordering: .relaxed) }
    package var commitsRead: Int { commits.load(ordering: .relaxed) }
    package var documentHeadListings: Int { headListings.load(ordering: .relaxed) }
    package var sessionsOpened: Int { sessions.load(ordering: .relaxed) }
    package var packedRecordsRead: Int { packedRecords.load(ordering: .relaxed) }
    package var looseObjectLooks: Int { looseLooks.load(ordering: .relaxed) }
    package var readsThroughLibgit2: Int { libgit2Reads.load(ordering: .relaxed) }
    package var looksInWrittenPacks: Int { writtenPackLooks.load(ordering: .relaxed) }
    package var headsCheckedOnASecondThread: Int { secondThreadChecks.load(ordering: .relaxed) }
    package var objectsReadOnASecondThread: Int { secondThreadReads.load(ordering: .relaxed) }

    package func countReferencesListed(_ count: Int) { listed.add(count, ordering: .relaxed) }
    package func countCommitRead() { commits.add(1, ordering: .relaxed) }
    package func countDocumentHeadListing() { headListings.add(1, ordering: .relaxed) }
    package func countSessionOpened() { sessions.add(1, ordering: .relaxed) }
    package func countPackedRecordsRead(_ count: Int) { packedRecords.add(count, ordering: .relaxed) }
    package func countLooseObjectLooks(_ count: Int) { looseLooks.add(count, ordering: .relaxed) }
    package func countReadThroughLibgit2() { libgit2Reads.add(1, ordering: .relaxed) }
    package func countLookInWrittenPacks() { writtenPackLooks.add(1, ordering: .relaxed) }
    package func countHeadCheckedOnASecondThread() { secondThreadChecks.add(1, ordering: .relaxed) }
    package func countObjectsReadOnASecondThread(_ count: Int) { secondThreadReads.add(count, ordering: .relaxed) }

    /// Sets what runs between listing loose references and reading them (nil: nothing).
    package func afterListingLooseReferences(_ hook: (@Sendable () -> Void)?) { listingHook.withLock { $0 = hook } }

    func didListLooseReferences() { listingHook.withLock { $0 }?() }

    package func beforePushing(_ hook: (@Sendable () -> Void)?) { pushHook.withLock { $0 = hook } }

    package func willPush() { pushHook.withLock { $0 }?() }

    /// Sets what runs on a spill's thread before it writes its pack (nil: nothing).
    package func beforeWritingASpill(_ hook: (@Sendable () -> Void)?) { spillHook.withLock { $0 = hook } }

    func willWriteSpill() { spillHook.withLock { $0 }?() }

    /// A fault point: when it is the one this value pauses at, says so on stderr and sleeps, once per process.
    package func reach(_ point: String) {
        guard point == pausePoint, !paused.exchange(true, ordering: .relaxed) else { return }
        FileHandle.standardError.write(Data("truce: test pause at \(point), pid \(getpid())\n".utf8))
        sleep(60)
    }
}
