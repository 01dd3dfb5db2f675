import Foundation
import TestSupport
import Testing
import Truce

/// Generated triples (seeded): properties every structured merge must have, whatever the documents.
@Suite(.timeLimit(.minutes(20))) struct StructuredMergePropertyTests {
    static let count = 240

    static func merge(_ triple: StructuredTriple, swapped: Bool) throws -> StructuredMerge.FileMergeResult {
        try StructuredMerge.mergeFiles(
            base: triple.base, current: swapped ? triple.theirs : triple.ours,
            other: swapped ? triple.ours : triple.theirs, path: "generated.json")
    }

    static func object(_ data: Data) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// Bytes equal exactly when two parsed JSON values are equal (Linux does not bridge Swift collections to NSObject).
    static func canonical(_ value: Any) -> Data? {
        try? JSONSerialization.data(withJSONObject: [value], options: [.sortedKeys])
    }

    static func same(_ lhs: Any?, _ rhs: Any?) -> Bool {
        switch (lhs, rhs) {
        case (nil, nil): true
        case (let a?, let b?): canonical(a) == canonical(b)
        default: false
        }
    }

    @Test func cleanResultsParseKeepEveryOneSidedChangeAndDoNotDependOnWhichSideIsCurrent() throws {
        var random = SeededRandom(seed: 14)
        var clean = 0, conflicted = 0
        for index in 0..<Self.count {
            let triple = StructuredTriples.make(&random)
            let forward = try Self.merge(triple, swapped: false), backward = try Self.merge(triple, swapped: true)
            #expect((forward.conflictCount == 0) == (backward.conflictCount == 0), "triple \(index): cleanness depends on the side")
            guard forward.conflictCount == 0 else {
                conflicted += 1
                #expect(triple.expected == nil, "triple \(index) conflicted though its sides change different places")
                continue
            }
            clean += 1
            let merged = try Self.object(forward.content)
            _ = try StructuredValueText(forward.content)
            let base = try Self.object(triple.base), ours = try Self.object(triple.ours), theirs = try Self.object(triple.theirs)
            for name in triple.oursOnly { #expect(Self.same(merged[name], ours[name]), "triple \(index): ours' change to \(name) is lost") }
            for name in triple.theirsOnly {
                #expect(Self.same(merged[name], theirs[name]), "triple \(index): theirs' change to \(name) is lost")
            }
            for name in base.keys where !triple.oursOnly.contains(name) && !triple.theirsOnly.contains(name) {
                #expect(Self.same(merged[name], ours[name]) && Self.same(merged[name], theirs[name]), "triple \(index): \(name) changed")
            }
            #expect(
                try StructuredValueText(forward.content) == StructuredValueText(backward.content),
                "triple \(index): the result depends on which side is current")
            if let expected = triple.expected { #expect(try StructuredValueText(forward.content) == StructuredValueText(expected)) }
        }
        // The generator must exercise both outcomes, or the properties above prove little.
        #expect(clean >= Self.count / 2 && conflicted >= 10, "clean \(clean), conflicted \(conflicted)")
    }

    @Test func conflictsOnlyWhereBothSidesChangedOnePlaceDifferently() throws {
        var random = SeededRandom(seed: 1414)
        for index in 0..<Self.count {
            let triple = StructuredTriples.make(&random)
            let result = try Self.merge(triple, swapped: false)
            #expect((result.conflictCount > 0) == !triple.conflicting.isEmpty, "triple \(index): \(result.conflictCount) conflicts")
            #expect(result.conflictCount <= triple.conflicting.count)
        }
    }
}
