/// Members one side moved (renamed, or moved into another object), found so that the other side's edit of them can
/// follow the move, and so that a move the other side contradicts goes to a person.
///
/// A move is a member the base has that one side removed, and a member the
/// base lacks that the same side added holding the same value (by meaning,
/// whatever the layout), each the only one of its value on that side. Only
/// members reached through objects count (not array elements).
///
/// - When the other side still holds the old member and lacks the new one, and
///   the value is a non-empty object or array, the move is followed: the merge
///   removes the old member and, at the new place, merges the base's value with
///   the moved one and with the other side's edit of it.
/// - When the other side no longer holds the old member (it removed it, or
///   moved it elsewhere) and has nothing at the new place, the move is
///   contested, scalars included: the new place is a conflict for a person,
///   where a line merge would have asked too. Both sides making the same move
///   is no conflict.
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
    /// Moves ours made that theirs contradicts, by their new place, with why; and theirs' that ours contradicts.
    private(set) var oursContested: [[PathStep]: String] = [:]
    private(set) var theirsContested: [[PathStep]: String] = [:]
    /// Every path above a new place of ours' moves, followed or contested, and of theirs': a member added or retyped
    /// there must be merged member by member to reach it.
    private(set) var aboveOursTo: Set<[PathStep]> = []
    private(set) var aboveTheirsTo: Set<[PathStep]> = []

    init() {}

    init(base: StructuredValue?, ours: StructuredValue?, theirs: StructuredValue?) {
        guard let base, let ours, let theirs else { return }
        var sides: [(removed: [StructuredValue: [[PathStep]]], added: [StructuredValue: [[PathStep]]])] = []
        for side in [ours, theirs] {
            var removed: [StructuredValue: [[PathStep]]] = [:]
            var added: [StructuredValue: [[PathStep]]] = [:]
            Self.collect(base, side, at: [], removed: &removed, added: &added)
            sides.append((removed, added))
        }
        for (index, other) in [theirs, ours].enumerated() {
            let (removed, added) = sides[index]
            let otherAdded = sides[1 - index].added
            for (value, froms) in removed where froms.count == 1 {
                guard let tos = added[value], tos.count == 1 else { continue }
                let (from, to) = (froms[0], tos[0])
                // The other side put something at the new place: the merge there sees it (the same move, or an add/add).
                guard Self.value(at: to, in: other) == nil else { continue }
                let above = (0..<to.count).map { Array(to.prefix($0)) }
                let otherValue = Self.value(at: from, in: other)
                if let otherValue, otherValue.kindName == value.kindName {
                    guard Self.isMovable(value) else { continue }
                    let move = Move(from: from, base: value, other: otherValue)
                    if index == 0 {
                        oursTo[to] = move
                        oursFrom.insert(from)
                        aboveOursTo.formUnion(above)
                    } else {
                        theirsTo[to] = move
                        theirsFrom.insert(from)
                        aboveTheirsTo.formUnion(above)
                    }
                } else if Self.isMovable(value) || (otherValue == nil && Self.isTelling(value)) {
                    let elsewhere = otherAdded[value].flatMap { $0.count == 1 ? $0[0] : nil }
                    let other =
                        if let otherValue { "and made \(otherValue.kindName) there on the other" } else if let elsewhere {
                            "and to \(Self.pointer(elsewhere)) on the other"
                        } else { "and removed on the other" }
                    let reason = "moved here from \(Self.pointer(from)) on one side, " + other
                    if index == 0 {
                        oursContested[to] = reason
                        aboveOursTo.formUnion(above)
                    } else {
                        theirsContested[to] = reason
                        aboveTheirsTo.formUnion(above)
                    }
                }
            }
        }
        dropCycles()
        followMovedPlaces()
    }

    /// Two moves that each put a member inside the one the other moved (`a` into `b` on one side, `b` into `a` on the
    /// other) cannot both be followed: neither is, and the merge sees each member removed on one side and changed on
    /// the other, a conflict for a person.
    private mutating func dropCycles() {
        func isInside(_ path: [PathStep], _ container: [PathStep]) -> Bool {
            path.count > container.count && Array(path.prefix(container.count)) == container
        }
        for (ourTo, ourMove) in oursTo {
            for (theirTo, theirMove) in theirsTo where isInside(ourTo, theirMove.from) && isInside(theirTo, ourMove.from) {
                oursTo[ourTo] = nil
                oursFrom.remove(ourMove.from)
                theirsTo[theirTo] = nil
                theirsFrom.remove(theirMove.from)
            }
        }
    }

    /// Places below a member the other side moved are reached at its new place when the merge follows that move.
    private mutating func followMovedPlaces() {
        func translated<Value>(_ places: [[PathStep]: Value], through moves: [[PathStep]: Move]) -> [([PathStep], Value)] {
            places.flatMap { place, value in
                moves.compactMap { to, move in
                    place.count > move.from.count && Array(place.prefix(move.from.count)) == move.from
                        ? (to + place.dropFirst(move.from.count), value) : nil
                }
            }
        }
        for (place, reason) in translated(theirsContested, through: oursTo) { theirsContested[place] = reason }
        for (place, move) in translated(theirsTo, through: oursTo) { theirsTo[place] = move }
        for (place, reason) in translated(oursContested, through: theirsTo) { oursContested[place] = reason }
        for (place, move) in translated(oursTo, through: theirsTo) { oursTo[place] = move }
        for place in theirsContested.keys.map({ $0 }) + theirsTo.keys.map({ $0 }) {
            aboveTheirsTo.formUnion((0..<place.count).map { Array(place.prefix($0)) })
        }
        for place in oursContested.keys.map({ $0 }) + oursTo.keys.map({ $0 }) {
            aboveOursTo.formUnion((0..<place.count).map { Array(place.prefix($0)) })
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
                let sideValue = sideObject.members[index].value
                // Nothing moved out of or into a member the side left as it was.
                guard sideValue != member.value else { continue }
                if member.value.object == nil, let object = sideValue.object {
                    // A value that became an object: everything in it is new ("a|b": 1 nested as "a": {"b": 1}).
                    for (inner, innerMember) in zip(object.occurrences, object.members) {
                        collectAdded(innerMember.value, at: path + [step, .member(innerMember.key, occurrence: inner.count)], into: &added)
                    }
                } else {
                    collect(member.value, sideValue, at: path + [step], removed: &removed, added: &added)
                }
            } else {
                removed[member.value, default: []].append(path + [step])
            }
        }
        for (occurrence, member) in zip(sideObject.occurrences, sideObject.members) where baseIndex(occurrence) == nil {
            collectAdded(member.value, at: path + [.member(member.key, occurrence: occurrence.count)], into: &added)
        }
    }

    /// A new member and, when it is an object, every member inside it: a moved value may land in a new object.
    private static func collectAdded(_ value: StructuredValue, at path: [PathStep], into added: inout [StructuredValue: [[PathStep]]]) {
        added[value, default: []].append(path)
        guard case .object(let object) = value else { return }
        for (occurrence, member) in zip(object.occurrences, object.members) {
            collectAdded(member.value, at: path + [.member(member.key, occurrence: occurrence.count)], into: &added)
        }
    }

    /// Only non-empty objects and arrays are followed: an equal scalar (or empty container) in two places is too weak a
    /// sign of a move to carry an edit there, though enough to ask a person when the other side removed it.
    private static func isMovable(_ value: StructuredValue) -> Bool {
        switch value {
        case .object(let object): !object.members.isEmpty
        case .array(let array): !array.elements.isEmpty
        default: false
        }
    }

    /// A members-only path as a JSON Pointer, for people.
    static func pointer(_ path: [PathStep]) -> String {
        JSONPointer.string(path.map { if case .member(let key, _) = $0 { key } else { "" } })
    }

    /// A string or a number: one that left a member and appeared in another on the same side says it moved there;
    /// `true`, `false` and `null` are in too many places to say anything.
    private static func isTelling(_ value: StructuredValue) -> Bool {
        switch value {
        case .string(let text, _): !text.isEmpty
        case .number, .real, .date, .data: true
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
