import Foundation
import TestSupport
import Testing

@testable import TruceCore

/// Hybrid logical dates: a version is dated its date asked for, or one second past its parents' dates and the newest
/// date the store adopted by sync when that is later; a date more than a day ahead of the clock is refused unless forced.
@Suite(.timeLimit(.minutes(10))) struct HybridDatesTests {
    static let day: TimeInterval = 86_400
    static let fourYears: TimeInterval = 4 * 365 * day

    @Test func aVersionIsNeverDatedBeforeItsParentAndASaveOnTopOfTheCurrentVersionBecomesCurrent() throws {
        let test = try TestStore()
        let now = Date()
        let ahead = try test.store.save(.text("ahead\n"), to: "a.txt", device: "fast", date: now + Self.fourYears, allowingFutureDate: true)
        // A right clock, then an explicit date years before the base: both are raised to a second past it.
        let right = try test.store.save(.text("right\n"), to: "a.txt", device: "right")
        #expect(right.modificationDate == ahead.modificationDate + 1)
        let behind = try test.store.save(.text("behind\n"), to: "a.txt", device: "slow", date: now - Self.fourYears)
        #expect(behind.modificationDate == right.modificationDate + 1)
        #expect(try test.store.currentVersion(of: "a.txt")?.id == behind.id)
        // A date later than the parent's stays as asked, to the second.
        let later = try test.store.save(.text("later\n"), to: "a.txt", device: "fast", date: now + Self.fourYears + 3600.5, allowingFutureDate: true)
        #expect(later.modificationDate == Date(timeIntervalSince1970: (now + Self.fourYears + 3600.5).timeIntervalSince1970.rounded(.down)))
        #expect(try test.git("log", "-1", "--format=%at", later.id.hex) == "\(Int(later.modificationDate.timeIntervalSince1970))\n")
    }

    @Test func aSaveMadeFromAnOlderBaseAfterAdoptingAFutureVersionIsDatedAfterIt() throws {
        let directory = TemporaryDirectory("truce-hybrid")
        let right = try DocumentStore.create(at: directory.file("right"))
        let fast = try DocumentStore.create(at: directory.file("fast"))
        let base = try right.save(.text("base\n"), to: "a.txt", device: "right")
        _ = try fast.sync(with: right.path)
        let theirs = try fast.save(.text("fast\n"), to: "a.txt", device: "fast", date: Date() + Self.fourYears, allowingFutureDate: true)
        #expect(try right.newestAdoptedDate() == nil)
        _ = try right.sync(with: fast.path)
        #expect(try right.newestAdoptedDate() == theirs.modificationDate)
        // The person on the right device saves from the base they had: a sibling of the future version, saved after it.
        let mine = try right.save(.text("mine\n"), to: "a.txt", device: "right", base: base.id)
        #expect(mine.parents == [base.id])
        #expect(mine.modificationDate == theirs.modificationDate + 1)
        #expect(try right.currentVersion(of: "a.txt")?.id == mine.id)
        // And a document the future version never touched: dated after it too, as a hybrid clock would.
        #expect(try right.save(.text("b\n"), to: "b.txt", device: "right").modificationDate == theirs.modificationDate + 1)
        // The store's own saves do not move the adopted date: only what sync brings does.
        #expect(try right.newestAdoptedDate() == theirs.modificationDate)
    }

    @Test func aDateMoreThanADayAheadIsRefusedUnlessForcedAndNothingIsWritten() throws {
        let test = try TestStore()
        let now = Date()
        try test.store.save(.text("one\n"), to: "a.txt", device: "laptop")
        let before = snapshot(ofStore: test.path)
        let tooFar = now + Self.day + 120
        #expect {
            try test.store.save(.text("two\n"), to: "a.txt", device: "laptop", date: tooFar)
        } throws: { error in
            guard case .dateTooFarAhead(let date, _) = error as? TruceError else { return false }
            return date == tooFar
        }
        #expect(throws: TruceError.self) { try test.store.delete("a.txt", device: "laptop", date: tooFar) }
        #expect(throws: TruceError.self) {
            try test.store.saveBatch([BatchSave(key: "b.txt", content: .text("b\n"), device: "laptop", date: tooFar)])
        }
        #expect(snapshot(ofStore: test.path) == before, "a refused save wrote something")
        // Within a day is drift, not a wrong clock; and a forced save goes through.
        try test.store.save(.text("two\n"), to: "a.txt", device: "laptop", date: now + Self.day - 120)
        let forced = try test.store.save(.text("three\n"), to: "a.txt", device: "laptop", date: tooFar, allowingFutureDate: true)
        #expect(forced.modificationDate == Date(timeIntervalSince1970: tooFar.timeIntervalSince1970.rounded(.down)))
    }

    @Test func savesOfOneDocumentInOneBatchEachGoOneSecondPastTheLast() throws {
        let test = try TestStore()
        let date = try #require(isoDate("2026-11-30T09:00:00Z"))
        let ids = try test.store.saveBatch((0..<3).map { BatchSave(key: "a.txt", content: .text("\($0)\n"), device: "laptop", date: date) })
        let dates = try ids.map { try test.git("log", "-1", "--format=%at", $0.hex) }
        let start = Int(date.timeIntervalSince1970)
        #expect(dates == ["\(start)\n", "\(start + 1)\n", "\(start + 2)\n"])
        // Other documents of the batch are dated as asked: nothing of theirs is a parent.
        let other = try test.store.saveBatch([BatchSave(key: "b.txt", content: .text("b\n"), device: "laptop", date: date)])
        #expect(try test.git("log", "-1", "--format=%at", other[0].hex) == "\(start)\n")
    }

    @Test func aResolutionIsDatedByItsHeadsAloneSoThatReplicasWriteTheSameCommit() throws {
        let test = try TestStore()
        let start = try #require(isoDate("2026-11-30T09:00:00Z"))
        let base = try test.store.save(.text("base\n"), to: "a.txt", device: "laptop", date: start)
        let one = try test.store.save(
            .text("one\n"), to: "a.txt", device: "laptop", base: base.id, date: Date() + Self.fourYears, allowingFutureDate: true)
        let two = try test.store.save(.text("two\n"), to: "a.txt", device: "phone", base: base.id)
        guard case .resolved(let resolved, _, _) = try test.store.resolve("a.txt", content: .text("settled\n"), device: "laptop") else {
            Issue.record("no resolution written")
            return
        }
        // The latest date among the heads it settles, whatever the clock or the store's adopted date: never before a parent.
        #expect(resolved.modificationDate == one.modificationDate)
        #expect(resolved.parents == [one.id, two.id])
    }
}
