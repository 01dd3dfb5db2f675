import Foundation
import TestSupport
import Testing
import Truce
import TruceTesting

/// Under every field rule, and under `last-writer-wins` key by key, a merge writes back every byte no side changed: the
/// corpus of JSON written every way JSON allows (JSONTestSuite's shapes among it), one field changed on one side and
/// another on the other.
@Suite(.timeLimit(.minutes(10))) struct FieldRuleBytesTests {
    /// The JSON Pointer of each scalar reached through objects only, by where its bytes start.
    static func pointers(in data: Data) -> [Int: String] {
        let bytes = [UInt8](data)
        var position = 0
        var pointers: [Int: String] = [:]
        func skip() { while position < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[position]) { position += 1 } }
        func string() -> String {
            let start = position
            position += 1
            while bytes[position] != UInt8(ascii: "\"") { position += bytes[position] == UInt8(ascii: "\\") ? 2 : 1 }
            position += 1
            let token = Data(bytes[start..<position])
            return (try? JSONSerialization.jsonObject(with: token, options: .fragmentsAllowed) as? String) ?? ""
        }
        func value(_ path: [String]?) {
            skip()
            switch bytes[position] {
            case UInt8(ascii: "{"):
                position += 1
                skip()
                while bytes[position] != UInt8(ascii: "}") {
                    let key = string()
                    skip()
                    position += 1  // the colon
                    value(path.map { $0 + [key] })
                    skip()
                    if bytes[position] == UInt8(ascii: ",") { position += 1 }
                    skip()
                }
                position += 1
            case UInt8(ascii: "["):
                position += 1
                skip()
                while bytes[position] != UInt8(ascii: "]") {
                    value(nil)
                    skip()
                    if bytes[position] == UInt8(ascii: ",") { position += 1 }
                    skip()
                }
                position += 1
            case UInt8(ascii: "\""):
                if let path { pointers[position] = FieldRule.pointer(ofSteps: path) }
                _ = string()
            default:
                if let path { pointers[position] = FieldRule.pointer(ofSteps: path) }
                while position < bytes.count, !",]} \t\r\n".utf8.contains(bytes[position]) { position += 1 }
            }
        }
        value([])
        return pointers
    }

    @Test(arguments: [FieldMerge.lww, .max, .min, .counter, .person, .text])
    func editsOfTwoFieldsUnderARuleAreTheOnlyChanges(rule: FieldMerge) throws {
        let corpus = JSONCorpus.generate(count: 400, seed: 28)
        var random = SeededRandom(seed: 4646)
        var checked = 0
        for (index, document) in corpus.enumerated() {
            let pointers = Self.pointers(in: document.bytes)
            // Fields a rule can apply to: strings for text, numbers for the rules that order or add, any for the others.
            let candidates = document.scalars.indices.filter { index in
                let first = document.bytes[document.scalars[index].range.lowerBound]
                let isString = first == UInt8(ascii: "\""), isNumber = first == UInt8(ascii: "-") || (48...57).contains(first)
                let fits = rule == .text ? isString : [.max, .min, .counter].contains(rule) ? isNumber : true
                return document.scalars[index].throughObjectsOnly && fits
            }
            guard candidates.count >= 2 else { continue }
            let first = random.pick(candidates)
            let second = random.pick(candidates.filter { $0 != first })
            guard let firstPointer = pointers[document.scalars[first].range.lowerBound],
                let secondPointer = pointers[document.scalars[second].range.lowerBound], firstPointer != secondPointer,
                !firstPointer.hasPrefix(secondPointer + "/"), !secondPointer.hasPrefix(firstPointer + "/")
            else { continue }
            // Strings for text; for the rules that order, numbers beyond any the corpus holds, so that the edit wins.
            let huge = String(repeating: "9", count: 40)
            let (oursText, theirsText) =
                switch rule {
                case .text: ("\"ours \(index)\"", "\"theirs \(index)\"")
                case .max: ("\(huge)1\(index)", "\(huge)2\(index)")
                case .min: ("-\(huge)1\(index)", "-\(huge)2\(index)")
                default: ("1\(index)", "2\(index)")
                }
            let ours = document.replacing(first, with: oursText), theirs = document.replacing(second, with: theirsText)
            let both = document.replacing(first, with: oursText, second, with: theirsText)
            let rules = [FieldRule("*.json", firstPointer, rule), FieldRule("*.json", secondPointer, rule)]
            for (current, other) in [(ours, theirs), (theirs, ours)] {
                let base = document.bytes
                // A rule on a field whose base is not a number (max, counter) or not a string (text) cannot apply: skip.
                let result: StructuredMerge.FileMergeResult
                do {
                    result = try StructuredMerge.mergeFiles(base: base, current: current, other: other, path: "corpus.json", fieldRules: rules)
                } catch is TruceError {
                    continue
                }
                #expect(result.conflictCount == 0, "document \(index) under \(rule.name)")
                #expect(result.content == both, "document \(index) under \(rule.name):\nwanted:  \(both.escaped)\nwritten: \(result.content.escaped)")
                checked += 1
            }
        }
        #expect(checked >= 100, "\(rule.name): \(checked) merges checked")
    }
    @Test func lastWriterWinsKeyByKeyChangesOnlyTheTwoEditedFields() async throws {
        let corpus = JSONCorpus.generate(count: 400, seed: 29)
        var random = SeededRandom(seed: 4647)
        var checked = 0
        for (index, document) in corpus.enumerated() {
            // Key by key needs an object at the top.
            guard document.bytes.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) == UInt8(ascii: "{") else { continue }
            let pointers = Self.pointers(in: document.bytes)
            let candidates = document.scalars.indices.filter { document.scalars[$0].throughObjectsOnly }
            guard candidates.count >= 2 else { continue }
            let first = random.pick(candidates)
            let second = random.pick(candidates.filter { $0 != first })
            guard let firstPointer = pointers[document.scalars[first].range.lowerBound],
                let secondPointer = pointers[document.scalars[second].range.lowerBound], firstPointer != secondPointer
            else { continue }
            let (oursText, theirsText) = ("\"ours \(index)\"", "\"theirs \(index)\"")
            let ours = document.replacing(first, with: oursText), theirs = document.replacing(second, with: theirsText)
            let both = document.replacing(first, with: oursText, second, with: theirsText)
            let fixture = ConflictFixture(
                key: "corpus.json", base: FixtureVersion(data: document.bytes, device: "base", date: ConflictFixture.date(minute: 0)),
                current: FixtureVersion(data: ours, device: "phone", date: ConflictFixture.date(minute: 2)),
                conflicts: [FixtureVersion(data: theirs, device: "laptop", date: ConflictFixture.date(minute: 1))])
            let outcome = try await fixture.resolve(with: LastWriterWins(), options: ["granularity": "key"])
            guard case .resolved(let content?) = outcome else {
                Issue.record("document \(index): \(outcome)")
                continue
            }
            #expect(content == both, "document \(index):\nwanted:  \(both.escaped)\nwritten: \(content.escaped)")
            checked += 1
        }
        #expect(checked >= 50, "\(checked) merges checked")
    }
}
