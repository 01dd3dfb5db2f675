import Foundation
internal import TruceGit

extension DocumentStore {
    /// How far ahead of this device's clock a save may be dated without `allowingFutureDate`, and how far ahead a
    /// version must be dated for `isDatedFarAhead` (and so `status` and `explain`) to point it out: a day.
    public static let futureDateTolerance: TimeInterval = HybridDates.futureTolerance

    /// True when `date` runs more than `futureDateTolerance` ahead of `now`: a version dated so came from a replica
    /// whose clock runs ahead (or was saved with `allowingFutureDate`), and stays current until a save supersedes it.
    public static func isDatedFarAhead(_ date: Date, now: Date = Date()) -> Bool {
        HybridDates.isFarAhead(date, of: now)
    }

    /// The newest author date among the versions this store adopted by sync; nil when it adopted none it knows of.
    ///
    /// Every save is dated after it (hybrid logical dates): when a replica's
    /// clock runs ahead, this is how far, and what is saved here after a
    /// sync still becomes current.
    public func newestAdoptedDate() throws(TruceError) -> Date? {
        try access.read { $0.newestAdoptedDate() }
    }
}
