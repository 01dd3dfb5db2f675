import Foundation
import Truce

/// What `status` and `explain` say of versions dated far ahead of this device's clock: they came from a replica whose
/// clock runs ahead (or were saved with `--allow-future-date`), they are kept, and saves here are dated after them.
enum DatesAhead {
    /// "3 hours", "1461 days": how far `date` runs ahead of `now`.
    static func distance(of date: Date, from now: Date) -> String {
        let seconds = date.timeIntervalSince(now)
        if seconds >= 2 * 86_400 { return "\(Int(seconds / 86_400)) days" }
        return "\(Int(seconds / 3600)) hours"
    }

    /// The note `status` adds when what this store adopted by sync is dated far ahead.
    static func storeNote(newestAdopted: Date, now: Date) -> String {
        "note: versions adopted by sync are dated up to \(ISO8601.format(newestAdopted)), "
            + "\(distance(of: newestAdopted, from: now)) ahead of this device's clock: a replica's clock runs ahead. "
            + "They are kept, and saves here are dated after them, so what is saved last still becomes current"
    }

    /// The line `explain` adds for a head dated far ahead.
    static func headNote(_ version: Version, now: Date) -> String {
        "dated ahead: \(version.id.short) is dated \(ISO8601.format(version.modificationDate)), "
            + "\(distance(of: version.modificationDate, from: now)) ahead of this device's clock (a replica's clock runs ahead, "
            + "or it was saved with --allow-future-date); a save on top of it is dated after it and becomes current"
    }
}
