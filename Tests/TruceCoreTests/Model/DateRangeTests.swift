import Foundation
import TestSupport
import Testing

@testable import TruceCore

/// A version's date is stored exactly or refused: libgit2 writes seconds as an unsigned 32-bit number, so
/// anything outside 1970-01-01T00:00:00Z ... 2106-02-07T06:28:15Z would wrap (1900 would become 2036).
@Suite(.timeLimit(.minutes(10))) struct DateRangeTests {
    @Test(arguments: ["1900-01-01T00:00:00Z", "1969-12-31T23:59:59Z", "2106-02-07T06:28:16Z", "2200-01-01T00:00:00Z"])
    func aDateGitCannotStoreExactlyIsRefusedAndWritesNothing(text: String) throws {
        let test = try TestStore()
        try test.store.save(.text("now\n"), to: "a.txt", device: "laptop")
        let date = try #require(isoDate(text))
        let before = snapshot(ofStore: test.path)
        #expect(throws: TruceError.dateOutOfRange(date)) { try test.store.save(.text("x\n"), to: "a.txt", device: "laptop", date: date) }
        #expect(throws: TruceError.dateOutOfRange(date)) { try test.store.delete("a.txt", device: "laptop", date: date) }
        #expect(throws: TruceError.dateOutOfRange(date)) {
            try test.store.saveBatch([
                BatchSave(key: "b.txt", content: .text("b\n"), device: "laptop"),
                BatchSave(key: "c.txt", content: .text("c\n"), device: "laptop", date: date),
            ])
        }
        #expect(snapshot(ofStore: test.path) == before)
    }

    @Test(arguments: [("1970-01-01T00:00:00Z", "0"), ("2106-02-07T06:28:15Z", "4294967295"), ("2038-01-19T03:14:08Z", "2147483648")])
    func theDatesAtTheEdgesAreStoredExactly(text: String, seconds: String) throws {
        let test = try TestStore()
        let version = try test.store.save(
            .text("x\n"), to: "a.txt", device: "laptop", date: try #require(isoDate(text)), allowingFutureDate: true)
        #expect(try test.git("show", "-s", "--format=%at", version.id.hex) == seconds + "\n")
        #expect(ISO8601.format(try test.store.versions(of: "a.txt").current!.modificationDate) == text)
        #expect(try test.git("fsck", "--strict", "--no-dangling").isEmpty)
    }
}
