import Foundation
internal import TruceGit

/// The date a new version gets: hybrid logical dates, so that dates never go back along history.
///
/// The current version is the head with the latest author date. Dated by the
/// saving device's clock alone, a version saved on top of one that came from
/// a replica whose clock runs ahead would be older than its own parent: the
/// person saved on top of what they saw, and their save would not become
/// current. So a new version is dated the later of the date asked for (the
/// device's clock, or an explicit date) and one second past the newest date
/// the store has seen: its parents' dates and the newest date of any version
/// it adopted by sync (`NewestAdoptedDate`). A hybrid logical clock does the
/// same with the physical clock and the latest timestamp it received.
///
/// Resolutions and reopenings are not dated here: a resolution takes the
/// latest date of the heads it settles (never before a parent, and a
/// function of the heads alone, so that replicas write the same commit), and
/// a reopening restores the versions a resolution settled with their own
/// dates, so that the conflict comes back as it was.
enum HybridDates {
    /// How far ahead of the local clock a save may be dated without being forced, and how far ahead an adopted
    /// version must be for `status` and `explain` to point it out: clocks set a day wrong are not drift.
    static let futureTolerance: TimeInterval = 24 * 3600

    /// Refuses a date asked for a new version that runs more than `futureTolerance` ahead of `now`, unless `allowing`.
    ///
    /// A version dated in the future stays current until the clocks catch up,
    /// and every version saved on top of it anywhere is dated after it.
    static func checkNotFarAhead(_ date: Date, now: Date = Date(), allowing: Bool) throws(TruceError) {
        guard !allowing, isFarAhead(date, of: now) else { return }
        throw .dateTooFarAhead(date, clock: now)
    }

    /// True when `date` runs more than `futureTolerance` ahead of `now`.
    static func isFarAhead(_ date: Date, of now: Date) -> Bool {
        date.timeIntervalSince(now) > futureTolerance
    }

    /// The date of a new version asked to be dated `requested`, made from versions dated `parents`, in a store that
    /// adopted versions up to `newestAdopted`: to the second, and after every one of them.
    static func date(asking requested: Date, parents: [Date], newestAdopted: Date?) -> Date {
        let asked = requested.timeIntervalSince1970.rounded(.down)
        let seen = (parents + [newestAdopted].compactMap { $0 }).map { $0.timeIntervalSince1970.rounded(.down) }.max()
        guard let seen, seen + 1 > asked else { return Date(timeIntervalSince1970: asked) }
        return Date(timeIntervalSince1970: seen + 1)
    }

    /// The date of a new version made from the versions `parents` (heads as read, or any version), in `repository`.
    static func date(asking requested: Date, parents: [Date], in repository: Repository) -> Date {
        date(asking: requested, parents: parents, newestAdopted: NewestAdoptedDate.read(in: repository))
    }
}
