import Foundation
import TestSupport
import Testing
import Truce

/// A structured merge is a conflict or what a model merge of the same edits gives, never anything else.
///
/// Each scenario (`ModelScenario`, seeded) is a random JSON base and random edits on two sides: member edits,
/// additions, deletions, renames, moves into other objects and into new ones, member reorders, array insertions,
/// removals and replacements, and reformatting. `ModelMerge` knows what the edits were, so it knows the right answer:
/// edits at different places all apply, a container moved on one side takes the other side's edits inside it along,
/// and anything else that overlaps is a conflict. `MODEL_SEED` and `MODEL_COUNT` run other and more scenarios.
@Suite(.timeLimit(.minutes(10))) struct StructuredMergeModelTests {
    static let count = 1500

    static func merged(_ result: StructuredMerge.FileMergeResult) -> ModelValue? {
        guard result.conflictCount == 0, let parsed = try? JSONSerialization.jsonObject(with: result.content) else { return nil }
        return ModelValue(parsed: parsed)
    }

    @Test func aMergeIsAConflictOrTheModelsValueNeverAnythingElse() throws {
        var random = SeededRandom(seed: UInt64(ProcessInfo.processInfo.environment["MODEL_SEED"] ?? "") ?? 49)
        var cleanWhereModelMerges = 0, conflictWhereModelMerges = 0, conflictWhereModelConflicts = 0
        var wrong: [String] = []
        for index in 0..<(Int(ProcessInfo.processInfo.environment["MODEL_COUNT"] ?? "") ?? Self.count) {
            let scenario = ModelScenario.make(&random)
            let model = ModelMerge.merge(base: scenario.base, ours: scenario.ours, theirs: scenario.theirs)
            for swapped in [false, true] {
                let result = try StructuredMerge.mergeFiles(
                    base: scenario.baseData, current: swapped ? scenario.theirsData : scenario.oursData,
                    other: swapped ? scenario.oursData : scenario.theirsData, path: "model.json")
                let value = Self.merged(result)
                switch model {
                case .conflict where result.conflictCount > 0:
                    if !swapped { conflictWhereModelConflicts += 1 }
                case .conflict:
                    wrong.append("scenario \(index)\(swapped ? " swapped" : ""): merged \(value.map(\.description) ?? "?") where the edits overlap")
                case .value where result.conflictCount > 0:
                    if !swapped { conflictWhereModelMerges += 1 }
                case .value(let expected):
                    if value != expected {
                        wrong.append(
                            "scenario \(index)\(swapped ? " swapped" : ""): merged \(value.map(\.description) ?? "?"), the model \(expected)")
                    } else if !swapped {
                        cleanWhereModelMerges += 1
                    }
                }
                if !wrong.isEmpty && wrong.count <= 3 && wrong.last!.hasPrefix("scenario \(index)") {
                    Issue.record(
                        """
                        \(wrong.last!)
                        ours: \(scenario.ours)
                        theirs: \(scenario.theirs)
                        base: \(String(decoding: scenario.baseData, as: UTF8.self))
                        """)
                }
            }
        }
        #expect(wrong.isEmpty, "\(wrong.count) silently wrong merges")
        // The generator must exercise every outcome, and a merge should rarely ask where the model merges.
        #expect(cleanWhereModelMerges >= Self.count / 3 && conflictWhereModelConflicts >= Self.count / 20)
        #expect(
            conflictWhereModelMerges * 10 <= cleanWhereModelMerges,
            "conflicts where the model merges: \(conflictWhereModelMerges), clean: \(cleanWhereModelMerges)")
    }
}
