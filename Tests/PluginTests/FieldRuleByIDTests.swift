import Foundation
import TestSupport
import Testing
import Truce
import TruceTesting

/// Arrays of objects matched by an id member (`id=MEMBER`), against a model: random inserts, deletes, moves and edits on
/// two to four heads, each element's fields by their own rules.
@Suite(.timeLimit(.minutes(10))) struct FieldRuleByIDTests {
    static let rules = [
        FieldRule("*.json", "/items", .byID("id")), FieldRule("*.json", "/items/*/v", .lww),
        FieldRule("*.json", "/items/*/n", .counter), FieldRule("*.json", "/head", .max),
    ]

    struct Item: Equatable {
        var id: Int
        var v: Int
        var n: Int
    }

    /// `{"head": N, "items": [...]}`, one element a line; `head` sets each head apart.
    static func document(_ items: [Item], head: Int) -> Data {
        let lines = items.map { #"    {"id": \#($0.id), "v": \#($0.v), "n": \#($0.n)}"# }.joined(separator: ",\n")
        return Data("{\n  \"head\": \(head),\n  \"items\": [\n\(lines)\n  ]\n}\n".utf8)
    }

    @Test func elementsByIdFollowTheModel() async throws {
        var random = SeededRandom(seed: 4600)
        var (inserted, deleted, moved, edited) = (0, 0, 0, 0)
        for round in 0..<150 {
            let base = (0..<random.int(3...40)).map { Item(id: $0, v: random.int(0...9), n: random.int(0...9)) }
            let headCount = random.int(2...4)
            // An element some head deletes is edited by none: that would be a conflict, not a rule's to settle.
            let doomed = Set(base.map(\.id).filter { _ in random.chance(15) })
            var heads: [[Item]] = []
            var deletedBySome = Set<Int>()
            // One head moves an element: moves on two heads that disagree on the order go to a person.
            let mover = random.int(0..<headCount)
            var latestV: [Int: Int] = [:]  // id → v of the latest head that changed it (heads are dated newest first)
            var expected = Dictionary(uniqueKeysWithValues: base.filter { !doomed.contains($0.id) }.map { ($0.id, $0) })
            for head in 0..<headCount {
                var items = base
                for item in base where doomed.contains(item.id) && random.chance(60) {
                    items.removeAll { $0.id == item.id }
                    deletedBySome.insert(item.id)
                    deleted += 1
                }
                for index in items.indices where !doomed.contains(items[index].id) {
                    if random.chance(25) {
                        items[index].v = 10 + head * 10 + random.int(0...9)
                        if latestV[items[index].id] == nil { latestV[items[index].id] = items[index].v }
                        edited += 1
                    }
                    if random.chance(25) {
                        let delta = random.int(-5...5)
                        items[index].n += delta
                        expected[items[index].id]?.n += delta
                        edited += 1
                    }
                }
                if head == mover, items.count > 1, random.chance(70) {
                    let element = items.remove(at: random.int(0..<items.count))
                    items.insert(element, at: random.int(0...items.count))
                    moved += 1
                }
                for number in 0..<random.int(0...2) {
                    let item = Item(id: 1000 * (head + 1) + number, v: random.int(0...9), n: random.int(0...9))
                    items.insert(item, at: random.int(0...items.count))
                    expected[item.id] = item
                    inserted += 1
                }
                heads.append(items)
            }
            for (id, v) in latestV { expected[id]?.v = v }
            for item in base where doomed.contains(item.id) && !deletedBySome.contains(item.id) { expected[item.id] = item }
            let fixture = ConflictFixture(
                key: "f.json", base: FixtureVersion(data: Self.document(base, head: 0), device: "base", date: ConflictFixture.date(minute: 0)),
                current: FixtureVersion(data: Self.document(heads[0], head: 1), device: "d0", date: ConflictFixture.date(minute: 10)),
                conflicts: heads.enumerated().dropFirst().map { index, items in
                    FixtureVersion(data: Self.document(items, head: index + 1), device: "d\(index)", date: ConflictFixture.date(minute: 10 - index))
                })
            var context = try fixture.context(resolverName: "structured")
            context.fieldRules = Self.rules
            let outcome = try await StructuredMerge().resolve(try fixture.conflictSet(), context: context)
            let content = try #require(outcome.resolvedContent, "round \(round): \(outcome)")
            let object = try #require(try JSONSerialization.jsonObject(with: content) as? [String: Any])
            let items = try #require(object["items"] as? [[String: Int]]).map { Item(id: $0["id"]!, v: $0["v"]!, n: $0["n"]!) }
            #expect(Set(items.map(\.id)).count == items.count, "round \(round): an element twice")
            #expect(
                items.sorted { $0.id < $1.id } == expected.values.sorted { $0.id < $1.id },
                "round \(round):\n\(String(decoding: content, as: UTF8.self))")
        }
        #expect(inserted > 100 && deleted > 100 && moved > 100 && edited > 1000, "\(inserted) \(deleted) \(moved) \(edited)")
    }
}
