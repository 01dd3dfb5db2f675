import Foundation
import Testing

@testable import TruceCore
@testable import TruceGit

/// The heads a sync's listing found (`IncomingCandidates`): each in the order listed, with the reference and manifest
/// that listed it, and a head that manifests list twice only once.
@Suite struct IncomingCandidatesTests {
    private func id(_ byte: UInt8) -> ObjectID { ObjectID(bytes: [UInt8](repeating: byte, count: 20)[...]) }

    @Test func eachHeadIsListedOnceWithTheReferenceAndManifestThatListedItFirst() {
        let first = "refs/truce/replicas/" + String(repeating: "a", count: 32)
        let second = "refs/truce/replicas/" + String(repeating: "b", count: 32)
        var candidates = IncomingCandidates()
        candidates.append(contentsOf: [id(1), id(2), id(1)], reference: first, legacy: false, via: id(100))
        candidates.append(contentsOf: [], reference: second, legacy: false, via: id(101))
        candidates.append(contentsOf: [id(2), id(3)], reference: second, legacy: false, via: nil)
        candidates.append(contentsOf: [id(3)], reference: "refs/truce/heads/03/x/y", legacy: true, via: nil)
        candidates.append(contentsOf: [id(3)], reference: "refs/truce/heads/03/x/z", legacy: true, via: nil)
        candidates.finish()

        #expect(candidates.map(\.id) == [id(1), id(2), id(3), id(3), id(3)])
        #expect(candidates.map(\.reference) == [first, first, second, "refs/truce/heads/03/x/y", "refs/truce/heads/03/x/z"])
        #expect(candidates.map(\.via) == [id(100), id(100), nil, nil, nil])
        #expect(candidates.map(\.legacy) == [false, false, false, true, true])
        #expect(candidates[2..<4].map(\.reference) == [second, "refs/truce/heads/03/x/y"], "a batch's slice reads its runs")
        #expect(candidates.headReferencesName(id(3)) && !candidates.headReferencesName(id(1)))
    }
}
