import Foundation

/// A generated (base, ours, theirs) triple of JSON documents and what a correct structured merge makes of it.
public struct StructuredTriple: Sendable {
    public let base: Data
    public let ours: Data
    public let theirs: Data
    /// The merged document (compare by meaning), nil when the sides change one place differently.
    public let expected: Data?
    /// Top-level members only ours changed, only theirs changed, and both changed differently.
    public let oursOnly: [String]
    public let theirsOnly: [String]
    public let conflicting: [String]
}

/// Random nested JSON with random edits on two sides, seeded, so a merge's answer is known by construction.
///
/// Each top-level member is left alone, changed by one side, changed alike
/// by both, or (one time in twenty-five) changed differently by both. The members are
/// scalars, nested objects, arrays of strings and arrays of records with an
/// `id`; the edits change, add and remove members, insert, remove and replace
/// elements, and edit, insert, delete and move records.
public enum StructuredTriples {
    private enum Role { case untouched, ours, theirs, both, conflicting }

    public static func make(_ random: inout SeededRandom) -> StructuredTriple {
        var base: [String: Any] = [:]
        for index in 0..<random.int(5...10) { base["m\(index)"] = value(kind: random.int(0...3), &random) }
        var ours = base, theirs = base, expected: [String: Any]? = base
        var oursOnly: [String] = [], theirsOnly: [String] = [], conflicting: [String] = []
        for name in base.keys.sorted() {
            let roll = random.int(0...99)
            let role: Role = roll < 30 ? .untouched : roll < 58 ? .ours : roll < 86 ? .theirs : roll < 96 ? .both : .conflicting
            switch role {
            case .untouched:
                break
            case .ours:
                ours[name] = edited(base[name]!, &random)
                expected?[name] = ours[name]
                oursOnly.append(name)
            case .theirs:
                theirs[name] = edited(base[name]!, &random)
                expected?[name] = theirs[name]
                theirsOnly.append(name)
            case .both:
                let change = edited(base[name]!, &random)
                (ours[name], theirs[name]) = (change, change)
                expected?[name] = change
            case .conflicting:
                (ours[name], theirs[name]) = conflictingEdits(base[name]!, &random)
                expected = nil
                conflicting.append(name)
            }
        }
        if random.chance(15), let name = oursOnly.first {
            // A member removed on one side only: the merge removes it.
            ours[name] = nil
            expected?[name] = nil
        }
        if random.chance(15) {
            theirs["added"] = value(kind: random.int(0...3), &random)
            expected?["added"] = theirs["added"]
            theirsOnly.append("added")
        }
        return StructuredTriple(
            base: json(base), ours: json(ours), theirs: json(theirs), expected: expected.map(json),
            oursOnly: oursOnly, theirsOnly: theirsOnly, conflicting: conflicting)
    }

    /// Pretty JSON with sorted keys, one member or element per line, as settings files are written.
    public static func json(_ object: Any) -> Data {
        var data = try! JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        data.append(0x0A)
        return data
    }

    private static let words = ["light", "dark", "mono", "serif", "north", "south", "alpha", "beta", "gamma", "delta", "omega"]

    private static func word(_ random: inout SeededRandom) -> String { random.pick(words) + String(random.int(0...999)) }

    private static func scalar(_ random: inout SeededRandom) -> Any {
        switch random.int(0...2) {
        case 0: return random.int(0...100_000)
        case 1: return word(&random)
        default: return random.chance(50)
        }
    }

    private static func record(id: Int, _ random: inout SeededRandom) -> [String: Any] {
        ["id": id, "name": word(&random), "qty": random.int(0...50)]
    }

    private static func value(kind: Int, _ random: inout SeededRandom) -> Any {
        switch kind {
        case 0: return scalar(&random)
        case 1: return Dictionary(uniqueKeysWithValues: (0..<random.int(2...4)).map { ("k\($0)", scalar(&random)) })
        case 2: return (0..<random.int(3...6)).map { _ in word(&random) }
        default:
            let first = random.int(1...1000)
            return (0..<random.int(3...6)).map { record(id: first + $0 * 7, &random) }
        }
    }

    private static func edited(_ value: Any, _ random: inout SeededRandom) -> Any {
        switch value {
        case var object as [String: Any]:
            let names = object.keys.sorted()
            switch random.int(0...2) {
            case 0: object[random.pick(names)] = scalar(&random)
            case 1: object["n\(random.int(0...99))"] = scalar(&random)
            default: object[random.pick(names)] = nil
            }
            return object
        case var records as [[String: Any]]:
            let index = random.int(0...records.count - 1)
            switch random.int(0...3) {
            case 0: records[index]["name"] = word(&random)
            case 1: records.insert(record(id: 5000 + random.int(0...4000), &random), at: random.int(0...records.count))
            case 2: records.remove(at: index)
            default: records.swapAt(index, (index + 1) % records.count)
            }
            return records
        case var strings as [String]:
            let index = random.int(0...strings.count - 1)
            switch random.int(0...2) {
            case 0: strings.insert(word(&random), at: random.int(0...strings.count))
            case 1: strings.remove(at: index)
            default: strings[index] = word(&random)
            }
            return strings
        default:
            var replacement = scalar(&random)
            while (replacement as? NSObject)?.isEqual(value) == true { replacement = scalar(&random) }
            return replacement
        }
    }

    /// Two different changes to one place inside `value`: a conflict at that place.
    private static func conflictingEdits(_ value: Any, _ random: inout SeededRandom) -> (Any, Any) {
        switch value {
        case var object as [String: Any]:
            var other = object
            let name = random.pick(object.keys.sorted())
            object[name] = "ours " + word(&random)
            other[name] = "theirs " + word(&random)
            return (object, other)
        case var records as [[String: Any]]:
            var other = records
            let index = random.int(0...records.count - 1)
            records[index]["name"] = "ours " + word(&random)
            other[index]["name"] = "theirs " + word(&random)
            return (records, other)
        case var strings as [String]:
            var other = strings
            let index = random.int(0...strings.count - 1)
            strings[index] = "ours " + word(&random)
            other[index] = "theirs " + word(&random)
            return (strings, other)
        default:
            return ("ours " + word(&random), "theirs " + word(&random))
        }
    }
}
