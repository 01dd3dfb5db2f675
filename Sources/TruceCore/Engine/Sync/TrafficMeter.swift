import Foundation
import Synchronization
internal import TruceGit

/// Adds up a sync's transfers (a fetch, then one or two pushes) and reports the running total to `progress`.
///
/// Sendable, under a lock: a sync's exchange and the send after its resolving run on different threads.
final class TrafficMeter: Sendable {
    private struct Totals {
        var traffic = SyncReport.Traffic()
        var sentBefore = SyncReport.Traffic()
    }

    private let totals = Mutex(Totals())
    private let progress: (@Sendable (SyncReport.Traffic) -> Void)?
    /// Where a test stops a sync mid-transfer (`sync-downloading`, `sync-sending`).
    private let instrumentation: Instrumentation

    init(progress: (@Sendable (SyncReport.Traffic) -> Void)?, instrumentation: Instrumentation) {
        self.progress = progress
        self.instrumentation = instrumentation
    }

    var traffic: SyncReport.Traffic { totals.withLock { $0.traffic } }

    func received(_ counts: TransferCounts) {
        let now = totals.withLock { totals in
            (totals.traffic.receivedObjects, totals.traffic.receivedBytes) = (counts.objects, counts.bytes)
            return totals.traffic
        }
        if counts.bytes > 0 { instrumentation.reach("sync-downloading") }
        progress?(now)
    }

    /// The running counts of the current send; a later send adds to what earlier ones sent.
    func sending(_ counts: TransferCounts) {
        let now = totals.withLock { totals in
            (totals.traffic.sentObjects, totals.traffic.sentBytes) =
                (totals.sentBefore.sentObjects + counts.objects, totals.sentBefore.sentBytes + counts.bytes)
            return totals.traffic
        }
        if counts.bytes > 0 { instrumentation.reach("sync-sending") }
        progress?(now)
    }

    func sendFinished() { totals.withLock { $0.sentBefore = $0.traffic } }

    func adopted(_ documents: Int) {
        update { $0.documentsAdopted += documents }
    }

    /// `done` of the `total` heads the other side listed checked.
    func checking(_ done: Int, of total: Int) {
        update { ($0.headsChecked, $0.headsToCheck) = (done, total) }
    }

    /// `done` of the `total` objects that passed the checks written into this store.
    func storing(_ done: Int, of total: Int) {
        update { ($0.objectsStored, $0.objectsToStore) = (done, total) }
    }

    private func update(_ change: (inout SyncReport.Traffic) -> Void) {
        let now = totals.withLock { totals in
            change(&totals.traffic)
            return totals.traffic
        }
        progress?(now)
    }
}
