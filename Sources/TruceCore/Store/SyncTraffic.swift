import Foundation
internal import TruceGit

/// What one sync moved over the wire, and what it adopted.
public struct SyncTraffic: Sendable, Codable, Equatable {
    /// Objects and bytes received from the other side.
    public var receivedObjects = 0, receivedBytes = 0
    /// Objects and bytes sent to the other side.
    public var sentObjects = 0, sentBytes = 0
    /// Documents that gained versions here.
    public var documentsAdopted = 0

    /// Nothing moved yet.
    package init() {}
}

/// Adds up a sync's transfers (a fetch, then one or two pushes) and reports the running total to `progress`.
final class TrafficMeter {
    private(set) var traffic = SyncTraffic()
    private var sentBefore = SyncTraffic()
    private let progress: (@Sendable (SyncTraffic) -> Void)?

    init(progress: (@Sendable (SyncTraffic) -> Void)?) { self.progress = progress }

    func received(_ counts: TransferCounts) {
        (traffic.receivedObjects, traffic.receivedBytes) = (counts.objects, counts.bytes)
        if counts.bytes > 0 { TestPause.at("sync-downloading") }
        progress?(traffic)
    }

    /// The running counts of the current send; a later send adds to what earlier ones sent.
    func sending(_ counts: TransferCounts) {
        (traffic.sentObjects, traffic.sentBytes) = (sentBefore.sentObjects + counts.objects, sentBefore.sentBytes + counts.bytes)
        if counts.bytes > 0 { TestPause.at("sync-sending") }
        progress?(traffic)
    }

    func sendFinished() { sentBefore = traffic }

    func adopted(_ documents: Int) {
        traffic.documentsAdopted += documents
        progress?(traffic)
    }
}
