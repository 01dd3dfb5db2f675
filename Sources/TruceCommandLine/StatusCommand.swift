import Foundation
import Truce

struct StatusCommand: Command {
    static let name = "status"
    static let synopsis = "truce status"
    static let summary = "list the documents in conflict"
    static let options: [Option] = [.json]

    static func run(_ invocation: Invocation) async throws -> ExitCode {
        try invocation.rejectExtraPositionals(beyond: 0)
        let store = try invocation.openStore()
        let inConflict = try store.documentsInConflict()
        let now = Date()
        // Versions dated far ahead of this clock are kept: said here, since they stay current until saved over.
        let adoptedAhead = try store.newestAdoptedDate().flatMap { DocumentStore.isDatedFarAhead($0, now: now) ? $0 : nil }
        if invocation.wantsJSON {
            try invocation.output.json(StatusReport(inConflict: inConflict.map(VersionsReport.init), adoptedDatedAheadUntil: adoptedAhead))
            return .success
        }
        if inConflict.isEmpty {
            invocation.output.out("no documents in conflict")
        } else {
            for versions in inConflict {
                let ahead = versions.heads.filter { DocumentStore.isDatedFarAhead($0.modificationDate, now: now) }.count
                let note = ahead == 0 ? "" : ", \(ahead) dated ahead of this device's clock"
                invocation.output.out("\(versions.key): in conflict (\(versions.heads.count) heads\(note))")
            }
        }
        if let adoptedAhead { invocation.output.out(DatesAhead.storeNote(newestAdopted: adoptedAhead, now: now)) }
        return .success
    }
}

struct StatusReport: Encodable {
    let inConflict: [VersionsReport]
    /// The newest date of a version adopted by sync, when it runs more than a day ahead of this device's clock.
    let adoptedDatedAheadUntil: Date?
}
