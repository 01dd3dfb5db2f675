/// Objects and arrays one side moved to another member (renamed, or moved into another object), found so that the
/// other side's edit of them can follow the move instead of conflicting with a removal.
///
/// A move is unambiguous when, on one side, exactly one member the base has
/// is gone, exactly one member the base lacks appeared, and both hold the same
/// non-empty object or array (by meaning, whatever the layout); the other side
/// must still have the member where it was and lack the new one. Only members
/// reached through objects count (not array elements). The merge then removes
/// the old member and, at the new place, merges the base's value with the moved
/// one and with the other side's edit of it.
struct MemberMoves {
    /// What a move brings to its new place: the base's value, and the other side's value at the old place.
    struct Move {
        let from: [PathStep]
        let base: StructuredValue
        let other: StructuredValue
    }

    /// Moves ours made, by their new place; and the old places they left.
    private(set) var oursTo: [[PathStep]: Move] = [:]
    private(set) var oursFrom: Set<[PathStep]> = []
    /// Moves theirs made, likewise.
    private(set) var theirsTo: [[PathStep]: Move] = [:]
    private(set) var theirsFrom: Set<[PathStep]> = []
    /// Every path above a new place of ours' moves, and of theirs': a member added there must be merged member by
    /// member to reach it.
    private(set) var aboveOursTo: Set<[PathStep]> = []
    private(set) var aboveTheirsTo: Set<[PathStep]> = []

    init() {}

    init(base: StructuredValue?, ours: StructuredValue?, theirs: StructuredValue?) {
        guard let base, let ours, let theirs else { return }
        for (side, other, isOurs) in [(ours, theirs, true), (theirs, ours, false)] {
            var removed: [StructuredValue: [[PathStep]]] = [:]
            var added: [StructuredValue: [[PathStep]]] = [:]
            Self.collect(base, side, at: [], removed: &removed, added: &added)
            for (value, froms) in removed where froms.count == 1 {
                guard let tos = added[value], tos.count == 1 else { continue }
                let (from, to) = (froms[0], tos[0])
                // The other side must still hold the old member (edited or not) and not have made the new one.
                guard let otherValue = Self.value(at: from, in: other), Self.value(at: to, in: other) == nil else { continue }
                let move = Move(from: from, base: value, other: otherValue)
                let above = (0..<to.count).map { Array(to.prefix($0)) }
                if isOurs {
                    oursTo[to] = move
                    oursFrom.insert(from)
                    aboveOursTo.formUnion(above)
                } else {
                    theirsTo[to] = move
                    theirsFrom.insert(from)
                    aboveTheirsTo.formUnion(above)
                }
            }
        }
    }

    /// Members of `base` that `side` lacks and members `side` has that `base` lacks, by value, below `path`.
    private static func collect(
        _ base: StructuredValue, _ side: StructuredValue, at path: [PathStep],
        removed: inout [StructuredValue: [[PathStep]]], added: inout [StructuredValue: [[PathStep]]]
    ) {
        guard case .object(let baseObject) = base, case .object(let sideObject) = side else { return }
        let baseIndex = baseObject.memberIndex(), sideIndex = sideObject.memberIndex()
        for (occurrence, member) in zip(baseObject.occurrences, baseObject.members) {
            let step = PathStep.member(member.key, occurrence: occurrence.count)
            if let index = sideIndex(occurrence) {
                // Nothing moved out of or into a member the side left as it was.
                guard sideObject.members[index].value != member.value else { continue }
                collect(member.value, sideObject.members[index].value, at: path + [step], removed: &removed, added: &added)
            } else if isMovable(member.value) {
                removed[member.value, default: []].append(path + [step])
            }
        }
        for (occurrence, member) in zip(sideObject.occurrences, sideObject.members) where baseIndex(occurrence) == nil {
            collectAdded(member.value, at: path + [.member(member.key, occurrence: occurrence.count)], into: &added)
        }
    }

    /// A new member and, when it is an object, every member inside it: a moved value may land in a new object.
    private static func collectAdded(_ value: StructuredValue, at path: [PathStep], into added: inout [StructuredValue: [[PathStep]]]) {
        if isMovable(value) { added[value, default: []].append(path) }
        guard case .object(let object) = value else { return }
        for (occurrence, member) in zip(object.occurrences, object.members) {
            collectAdded(member.value, at: path + [.member(member.key, occurrence: occurrence.count)], into: &added)
        }
    }

    /// Only non-empty objects and arrays: equal scalars (or empty containers) in two places say nothing of a move.
    private static func isMovable(_ value: StructuredValue) -> Bool {
        switch value {
        case .object(let object): !object.members.isEmpty
        case .array(let array): !array.elements.isEmpty
        default: false
        }
    }

    /// The value at `path` (members only) in `document`.
    static func value(at path: [PathStep], in document: StructuredValue) -> StructuredValue? {
        var value: StructuredValue? = document
        for step in path {
            guard case .member(let key, let occurrence) = step, case .object(let object)? = value else { return nil }
            value = object.indexByOccurrence()[ObjectValue.Occurrence(key: key, count: occurrence)].map { object.members[$0].value }
        }
        return value
    }
}
