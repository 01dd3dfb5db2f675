/// The elements of one array in several versions matched to the base's by an identity member, hashing only where the
/// versions do not agree.
///
/// Most elements of a large array are the same bytes in every version, at
/// the same place or a few places away (a removal or an insertion shifts the
/// rest by one). Each version is walked beside the base, with the offset the
/// last match left: an element with the base element's bytes is that element,
/// unchanged. Only what is left (changed, moved far, added or removed) is
/// matched by identity, through a table of those elements alone. A key given
/// to several elements of one version matches first to first, second to
/// second, ….
struct ElementMatching {
    /// One version's element for one base element: where it is, and whether it has the base element's bytes.
    struct Match {
        let position: Int
        let isUnchanged: Bool
    }

    /// For each version, for each base element, its match (nil: the version does not have it).
    private(set) var matches: [[Match?]]
    /// The identities no base element has, in the order the versions hold them, with each version's position of it.
    private(set) var additions: [(identity: StructuredValue, positions: [Int?])] = []

    /// How far from where the last match left off a version is searched for the base element's bytes.
    private static let window = 4

    /// Matches `versions` to `base`; `identity` gives an element's identity (nil: it has none).
    init(base: [StructuredValue], versions: [[StructuredValue]], identity: (StructuredValue) -> StructuredValue?) {
        let baseBytes = base.map(\.readBytes)
        matches = []
        var leftOver: [[Int]] = []
        for version in versions {
            var found = [Match?](repeating: nil, count: base.count)
            var used = [Bool](repeating: false, count: version.count)
            var offset = 0
            for (position, bytes) in baseBytes.enumerated() {
                guard let bytes else { continue }
                let expected = position + offset
                for step in 0...(2 * Self.window) {
                    // expected, expected - 1, expected + 1, expected - 2, …
                    let candidate = expected + (step % 2 == 0 ? step / 2 : -(step + 1) / 2)
                    guard version.indices.contains(candidate), !used[candidate],
                        version[candidate].readBytes.map({ $0.elementsEqual(bytes) }) == true
                    else { continue }
                    found[position] = Match(position: candidate, isUnchanged: true)
                    used[candidate] = true
                    offset = candidate - position
                    break
                }
            }
            // What is left, by identity: base elements not found by their bytes, and the version's elements not taken.
            var waiting: [StructuredValue: [Int]] = [:]
            for index in version.indices.reversed() where !used[index] {
                if let key = identity(version[index]) { waiting[key, default: []].append(index) }
            }
            for position in base.indices where found[position] == nil {
                guard let key = identity(base[position]), let index = waiting[key]?.popLast() else { continue }
                found[position] = Match(position: index, isUnchanged: FieldRulePass.same(version[index], base[position]))
                used[index] = true
            }
            matches.append(found)
            leftOver.append(version.indices.filter { !used[$0] })
        }
        // The additions, each identity once, with every version's element of it.
        var additionIndex: [StructuredValue: Int] = [:]
        for (number, positions) in leftOver.enumerated() {
            for position in positions {
                guard let key = identity(versions[number][position]) else { continue }
                if let existing = additionIndex[key] {
                    if additions[existing].positions[number] == nil { additions[existing].positions[number] = position }
                } else {
                    additionIndex[key] = additions.count
                    var positionsOfIt = [Int?](repeating: nil, count: versions.count)
                    positionsOfIt[number] = position
                    additions.append((key, positionsOfIt))
                }
            }
        }
    }
}
