import Foundation
import TestSupport
import Testing
import Truce

/// Keys that occur more than once in an object: after a merge, a reader that takes the first occurrence and one that
/// takes the last each read a value that one of the versions gave that reader.
@Suite(.timeLimit(.minutes(10))) struct StructuredDuplicateKeyTests {
    /// An object's members in order, duplicates kept: what a JSON reader sees before it picks one occurrence.
    typealias Members = [(key: String, value: String)]

    static func write(_ members: Members) -> Data {
        Data(("{\n" + members.map { "  \"\($0.key)\": \($0.value)" }.joined(separator: ",\n") + "\n}\n").utf8)
    }

    /// A flat object of scalars, read with every occurrence (the generated documents have nothing else).
    static func read(_ data: Data) throws -> Members {
        let text = String(decoding: data, as: UTF8.self)
        var members: Members = []
        for line in text.split(separator: "\n") where line.contains("\":") {
            let parts = line.trimmingCharacters(in: .whitespaces).split(separator: ":", maxSplits: 1)
            let key = parts[0].trimmingCharacters(in: CharacterSet(charactersIn: "\" "))
            var value = parts[1].trimmingCharacters(in: .whitespaces)
            if value.hasSuffix(",") { value.removeLast() }
            members.append((key, value))
        }
        try #require(try JSONSerialization.jsonObject(with: data) is [String: Any])
        return members
    }

    static func first(_ members: Members, _ key: String) -> String? { members.first { $0.key == key }?.value }
    static func last(_ members: Members, _ key: String) -> String? { members.last { $0.key == key }?.value }

    static func edited(_ members: Members, _ random: inout SeededRandom, side: String, counter: inout Int) -> Members {
        var members = members
        for _ in 0..<random.int(1...2) {
            counter += 1
            switch random.int(0...3) {
            case 0 where !members.isEmpty: members[random.int(0..<members.count)].value = "\"\(side)\(counter)\""
            case 1 where members.count > 1: members.remove(at: random.int(0..<members.count))
            case 2 where !members.isEmpty:
                // Another occurrence of a key the object has.
                members.insert((members[random.int(0..<members.count)].key, "\"\(side)\(counter)\""), at: random.int(0...members.count))
            default: members.insert(("\(side)\(counter)", "\(counter)"), at: random.int(0...members.count))
            }
        }
        return members
    }

    @Test func firstWinsAndLastWinsReadersReadAValueOneVersionGaveThem() throws {
        var random = SeededRandom(seed: 35)
        var counter = 0
        var clean = 0
        for index in 0..<2000 {
            var base: Members = []
            let keys = ["a", "b", "c", "d"]
            for _ in 0..<random.int(3...7) {
                counter += 1
                base.append((random.pick(keys), "\(counter)"))
            }
            let ours = Self.edited(base, &random, side: "o", counter: &counter)
            let theirs = Self.edited(base, &random, side: "t", counter: &counter)
            let result = try StructuredMerge.mergeFiles(
                base: Self.write(base), current: Self.write(ours), other: Self.write(theirs), path: "duplicates.json")
            guard result.conflictCount == 0 else { continue }
            clean += 1
            let merged = try Self.read(result.content)
            let versions = [base, ours, theirs]
            for key in Set((merged + base + ours + theirs).map(\.key)) {
                #expect(
                    versions.contains { Self.first($0, key) == Self.first(merged, key) },
                    "case \(index): a first-wins reader reads \(key) = \(Self.first(merged, key) ?? "nothing"), which no version gave it\nbase \(base)\nours \(ours)\ntheirs \(theirs)\nmerged \(merged)"
                )
                #expect(
                    versions.contains { Self.last($0, key) == Self.last(merged, key) },
                    "case \(index): a last-wins reader reads \(key) = \(Self.last(merged, key) ?? "nothing"), which no version gave it\nbase \(base)\nours \(ours)\ntheirs \(theirs)\nmerged \(merged)"
                )
            }
        }
        #expect(clean >= 500, "clean merges: \(clean)")
    }
}
