import Foundation
import Testing

@testable import TruceCore
@testable import TruceGit

/// The versions a receive's checks read (`CheckedVersions`): each found by its id as the change adoption reports, with
/// whether it has no parent, the first recorded kept.
@Suite struct CheckedVersionsTests {
    private func version(_ byte: UInt8, key: DocumentKey, parents: [UInt8] = [], deletion: Bool = false, device: String = "phone") -> Version {
        func id(_ byte: UInt8) -> VersionID { VersionID(ObjectID(bytes: [UInt8](repeating: byte, count: 20)[...])) }
        return Version(
            id: id(byte), key: key, deviceName: device, modificationDate: Date(timeIntervalSince1970: 1_796_000_000 + Double(byte)),
            isDeletion: deletion, parents: parents.map(id))
    }

    @Test func eachVersionIsFoundByItsIdAsTheChangeItMakes() {
        var versions = CheckedVersions()
        let first = version(1, key: "notes/a.txt"), second = version(2, key: "notes/a.txt", parents: [1], deletion: true, device: "laptop")
        versions.record(first)
        versions.record(second)
        // Recorded again (the same commit read twice): still one.
        versions.record(first)
        #expect(versions.count == 2)
        #expect(versions[first.id]?.change == Change(recording: first) && versions[first.id]?.isFirstVersion == true)
        #expect(versions[second.id]?.change == Change(recording: second) && versions[second.id]?.isFirstVersion == false)
        #expect(versions[second.id]?.change.kind == .delete && versions[second.id]?.change.author == "laptop")
        #expect(versions[version(3, key: "b").id] == nil)
    }

    @Test func aMergeAddsWhatWasNotRecordedAlready() {
        var one = CheckedVersions(), two = CheckedVersions()
        one.record(version(1, key: "a"))
        two.record(version(3, key: "c", parents: [2]))
        two.record(version(1, key: "a"))
        two.record(version(4, key: "d"))
        var merged = CheckedVersions()
        merged.merge(one)
        merged.merge(two)
        #expect(merged.count == 3)
        for (byte, key, isFirst) in [(1, "a", true), (3, "c", false), (4, "d", true)] as [(UInt8, DocumentKey, Bool)] {
            let expected = version(byte, key: key, parents: isFirst ? [] : [2])
            #expect(merged[expected.id]?.change == Change(recording: expected) && merged[expected.id]?.isFirstVersion == isFirst)
        }
    }
}
