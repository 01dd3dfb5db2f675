import Foundation
import TestSupport
import Testing
import Truce

/// A structured merge writes back every byte no side changed: the identity property over a generated corpus of JSON
/// written every way JSON allows, edits of one side and of both sides that leave the rest byte for byte, and the
/// layout of what is inserted or removed.
@Suite(.timeLimit(.minutes(10))) struct StructuredBytePreservationTests {
    static let corpus = JSONCorpus.generate(count: 400, seed: 28)
    static let shapes = JSONCorpus.shapes.map { Data($0.utf8) }

    /// Through the tree merge and the printer, never the byte shortcut that `mergeFiles` takes first.
    static func merged(_ base: Data, _ current: Data, _ other: Data) throws -> StructuredMerge.FileMergeResult {
        try StructuredMerge.mergeByStructure(base: base, current: current, other: other, path: "corpus.json")
    }

    @Test func theCorpusIsValidJSONOfEveryShape() throws {
        for (index, document) in (Self.shapes + Self.corpus.map(\.bytes)).enumerated() {
            #expect(
                (try? JSONSerialization.jsonObject(with: document, options: .fragmentsAllowed)) != nil,
                "document \(index) is not valid JSON: \(document.escaped)")
        }
        // The generator must make what it promises, or the properties below cover less than they claim.
        let text = Self.corpus.map { String(decoding: $0.bytes, as: UTF8.self) }
        for shape in ["\r\n", "\t", "[ ", "{\n", "\\u", "\\/", "e+", "E", "-0", "\"\"", "😀"] {
            #expect(text.contains { $0.contains(shape) }, "no document holds \(shape.debugDescription)")
        }
        #expect(Self.corpus.filter { $0.scalars.count(where: \.throughObjectsOnly) >= 2 }.count >= 200)
    }

    @Test func identityWritesEveryDocumentBackByteForByte() throws {
        for (index, document) in (Self.shapes + Self.corpus.map(\.bytes)).enumerated() {
            let result = try Self.merged(document, document, document)
            #expect(result.conflictCount == 0)
            #expect(result.content == document, "document \(index):\nread:    \(document.escaped)\nwritten: \(result.content.escaped)")
        }
    }

    @Test func anEditOfOneSideIsTheOnlyChange() throws {
        var random = SeededRandom(seed: 2801)
        var checked = 0
        for (index, document) in Self.corpus.enumerated() where !document.scalars.isEmpty {
            let scalar = random.int(0...document.scalars.count - 1)
            let edited = document.replacing(scalar, with: "\"edited \(index)\"")
            for (current, other) in [(document.bytes, edited), (edited, document.bytes)] {
                let result = try Self.merged(document.bytes, current, other)
                #expect(result.conflictCount == 0)
                #expect(
                    result.content == edited, "document \(index), scalar \(scalar):\nwanted:  \(edited.escaped)\nwritten: \(result.content.escaped)")
            }
            checked += 1
        }
        #expect(checked >= 350)
    }

    @Test func editsOfBothSidesAtDifferentMembersAreTheOnlyChanges() throws {
        var random = SeededRandom(seed: 2802)
        var checked = 0
        for (index, document) in Self.corpus.enumerated() {
            let members = document.scalars.indices.filter { document.scalars[$0].throughObjectsOnly }
            guard members.count >= 2 else { continue }
            let first = random.pick(members)
            let second = random.pick(members.filter { $0 != first })
            let ours = document.replacing(first, with: "1\(index)")
            let theirs = document.replacing(second, with: "\"theirs \(index)\"")
            let both = document.replacing(first, with: "1\(index)", second, with: "\"theirs \(index)\"")
            for (current, other) in [(ours, theirs), (theirs, ours)] {
                let result = try Self.merged(document.bytes, current, other)
                #expect(result.conflictCount == 0, "document \(index)")
                #expect(result.content == both, "document \(index):\nwanted:  \(both.escaped)\nwritten: \(result.content.escaped)")
            }
            checked += 1
        }
        #expect(checked >= 200)
    }

    /// What a merge inserts takes the layout around it; what it removes takes one separator with it.
    @Test(arguments: [
        // Ours removes "b", theirs edits "c".
        (
            "{\n  \"a\": 1,\n  \"b\": 2,\n  \"c\": 3\n}\n", "{\n  \"a\": 1,\n  \"c\": 3\n}\n", "{\n  \"a\": 1,\n  \"b\": 2,\n  \"c\": 4\n}\n",
            "{\n  \"a\": 1,\n  \"c\": 4\n}\n"
        ),
        // Ours edits "a" with odd spacing, theirs adds "d" after the last member.
        ("{\"a\":1 ,  \"b\":2}", "{\"a\":  5 ,  \"b\":2}", "{\"a\":1 ,  \"b\":2, \"d\" : 9}", "{\"a\":  5 ,  \"b\":2 ,  \"d\" : 9}"),
        // Ours removes an element, theirs replaces the last: the gaps next to what ours kept stay.
        ("[1, 2,  3,   4]", "[1, 3,   4]", "[1, 2,  3,   5]", "[1, 3,   5]"),
        // An empty container on our side takes theirs' layout for what theirs put in it.
        (
            "{\"l\": [   ], \"n\": 0}", "{\"l\": [   ], \"n\": 1}", "{\"l\": [\n    7,\n    8\n  ], \"n\": 0}",
            "{\"l\": [\n    7,\n    8\n  ], \"n\": 1}"
        ),
        // The first member removed: the next one takes the opening's place.
        ("{ \"a\": 1,\t\"b\": 2 }", "{ \"b\": 2 }", "{ \"a\": 1,\t\"b\": 3 }", "{ \"b\": 3 }"),
        // A CRLF document with a tab-indented nested array, theirs inserts an element in the middle.
        (
            "{\r\n\t\"l\": [\r\n\t\t1,\r\n\t\t3\r\n\t],\r\n\t\"x\": 0\r\n}\r\n", "{\r\n\t\"l\": [\r\n\t\t1,\r\n\t\t3\r\n\t],\r\n\t\"x\": 1\r\n}\r\n",
            "{\r\n\t\"l\": [\r\n\t\t1,\r\n\t\t2,\r\n\t\t3\r\n\t],\r\n\t\"x\": 0\r\n}\r\n",
            "{\r\n\t\"l\": [\r\n\t\t1,\r\n\t\t2,\r\n\t\t3\r\n\t],\r\n\t\"x\": 1\r\n}\r\n"
        ),
    ])
    func insertionsAndRemovalsTakeTheLayoutAroundThem(base: String, ours: String, theirs: String, expected: String) throws {
        let result = try Self.merged(Data(base.utf8), Data(ours.utf8), Data(theirs.utf8))
        #expect(result.conflictCount == 0)
        #expect(String(decoding: result.content, as: UTF8.self) == expected, "\(String(decoding: result.content, as: UTF8.self).debugDescription)")
    }

    /// When a side left the file as the base has it, `mergeFiles` returns the other side's bytes, reformatted or not.
    @Test func aSideThatChangedNothingGivesTheOtherSidesBytesWhole() throws {
        let base = Data("{\"a\": 1, \"b\": [1, 2]}\n".utf8)
        let reformatted = Data("{\n    \"a\": 1,\n    \"b\": [\n        1,\n        3\n    ]\n}".utf8)
        for (current, other) in [(base, reformatted), (reformatted, base), (reformatted, reformatted)] {
            let result = try StructuredMerge.mergeFiles(base: base, current: current, other: other, path: "x.json")
            #expect(result.content == reformatted && result.conflictCount == 0)
        }
    }
}
