import Foundation
import Testbed
import Truce

enum StructuredRows {
    /// A corpus of generated JSON triples whose right answer is known: how many each merge gets right.
    ///
    /// Right means clean with the expected document (compared by meaning),
    /// or a conflict where both sides changed one place differently.
    static func correctness(_ scale: Scale) throws -> [Row] {
        var random = SeededRandom(seed: 2014)
        let triples = (0..<scale.structuredTriples).map { _ in StructuredTriples.make(&random) }
        let directory = scratchDirectory("structured")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var structuredRight = 0, gitRight = 0
        for (index, triple) in triples.enumerated() {
            let merged = try? StructuredMerge.mergeFiles(base: triple.base, current: triple.ours, other: triple.theirs, path: "t.json")
            if let merged, isRight(clean: merged.conflictCount == 0, merged.content, triple) { structuredRight += 1 }
            writeFile("\(directory)/\(index).base", triple.base)
            writeFile("\(directory)/\(index).ours", triple.ours)
            writeFile("\(directory)/\(index).theirs", triple.theirs)
            let git = runChild("git", ["-C", directory, "merge-file", "-p", "\(index).ours", "\(index).base", "\(index).theirs"])
            if isRight(clean: git.status == 0, git.output, triple) { gitRight += 1 }
        }
        let share = Double(structuredRight) / Double(triples.count), gitShare = Double(gitRight) / Double(triples.count)
        func percent(_ value: Double) -> String { String(format: "%.1f%%", value * 100) }
        return [
            Row(
                work: "structured merge: share of \(triples.count) JSON triples merged right", truce: percent(share),
                baseline: "git merge-file: \(percent(gitShare))", ratio: gitShare > 0 ? share / gitShare : .infinity,
                target: "≥ 99% and above git's", met: share >= 0.99 && share > gitShare)
        ]
    }

    private static func isRight(clean: Bool, _ output: Data, _ triple: StructuredTriple) -> Bool {
        guard clean else { return triple.expected == nil }
        guard let expected = triple.expected else { return false }
        return canonical(output) != nil && canonical(output) == canonical(expected)
    }

    private static func canonical(_ data: Data) -> Data? {
        guard let object = try? JSONSerialization.jsonObject(with: data) else { return nil }
        return try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    }

    /// One JSON document of about 10 MB (records with ids, edited on both sides): the structured merge against git's line merge.
    static func largeDocument(_ scale: Scale) throws -> [Row] {
        let (base, ours, theirs) = largeTriple(bytes: 10_000_000)
        var conflicts = -1
        let truce = try bestOf(2) {
            conflicts = try StructuredMerge.mergeFiles(base: base, current: ours, other: theirs, path: "large.json").conflictCount
        }
        let directory = scratchDirectory("structured-large")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        writeFile(directory + "/base", base)
        writeFile(directory + "/ours", ours)
        writeFile(directory + "/theirs", theirs)
        let git = bestOf(2) { runChild("git", ["-C", directory, "merge-file", "-p", "ours", "base", "theirs"]) }
        let ratio = truce / git
        // The same merge under field rules on every record, beside the plain structured merge of the same run.
        let rules = [
            FieldRule("*.json", "/records", .byID("id")), FieldRule("*.json", "/records/*/price", .max),
            FieldRule("*.json", "/records/*/stock", .counter), FieldRule("*.json", "/records/*/tags", .union),
            FieldRule("*.json", "/version", .lww),
        ]
        var ruledConflicts = -1
        let ruled = try bestOf(2) {
            ruledConflicts = try StructuredMerge.mergeFiles(
                base: base, current: ours, other: theirs, path: "large.json", fieldRules: rules
            ).conflictCount
        }
        let ruledRatio = ruled / truce
        return [
            Row(
                work: "structured merge of one \(base.count / 1_000_000) MB JSON document (\(conflicts) conflicts)", truce: format(truce),
                baseline: "git merge-file -p: \(format(git))", ratio: ratio, target: "≤ 3× git's time", met: ratio <= 3 && conflicts == 0),
            Row(
                work: "  the same under field rules on every record (id, max, counter, union; \(ruledConflicts) conflicts)",
                truce: format(ruled), baseline: "without rules: \(format(truce))", ratio: ruledRatio,
                target: "≤ 1.2× without rules", met: ruledRatio <= 1.2 && ruledConflicts == 0),
        ]
    }

    /// Records `{"id", "name", "tags", "price", "stock"}` until the document reaches `bytes`; ours edits every 97th record's
    /// price and appends records, theirs edits every 89th record's stock, removes about one in 1000 and moves one.
    static func largeTriple(bytes: Int) -> (Data, Data, Data) {
        var records: [[String: Any]] = []
        var size = 0
        while size < bytes {
            let id = records.count
            records.append([
                "id": id, "name": "item \(id)", "tags": ["t\(id % 7)", "t\(id % 11)"], "price": Double(id % 1000) / 4,
                "stock": id % 50,
            ])
            size += 150
        }
        var ours = records, theirs = records
        for index in stride(from: 0, to: ours.count, by: 97) { ours[index]["price"] = 9.75 }
        for id in records.count..<records.count + 100 { ours.append(["id": id, "name": "new \(id)", "tags": [String](), "price": 1, "stock": 0]) }
        for index in stride(from: 1, to: theirs.count, by: 89) { theirs[index]["stock"] = 999 }
        theirs.swapAt(10, 20)
        // Records ours left alone, so the merge is clean and the row times a whole merge.
        theirs = theirs.enumerated().filter { $0.offset % 1000 != 999 || $0.offset % 97 == 0 }.map(\.element)
        func json(_ records: [[String: Any]]) -> Data {
            var data = try! JSONSerialization.data(withJSONObject: ["version": 1, "records": records], options: [.prettyPrinted, .sortedKeys])
            data.append(0x0A)
            return data
        }
        return (json(records), json(ours), json(theirs))
    }
}
