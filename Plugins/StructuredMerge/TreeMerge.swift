import Foundation

/// One step of the way to a value: a member by name (the first with that name, or a later one for a key that occurs
/// more than once), or an array element by its identity.
enum PathStep: Sendable, Hashable {
    case member(String, occurrence: Int)
    case element(identityMember: String, identity: StructuredValue)
}

/// A place where two heads cannot both be kept: its JSON Pointer, and why.
struct TreeConflict: Sendable {
    let pointer: String
    /// The way to the value in any version: members by name, array elements by identity.
    let steps: [PathStep]
    let reason: String
}

/// The three-way merge of one value tree against a base, by structure.
///
/// A value changed on one side only takes that side; the same change on both
/// sides is kept once. Objects merge member by member; arrays whose elements
/// are objects that all carry an identity member merge element by element,
/// others as sequences. Where both sides changed the same place differently
/// the result holds an `.unresolved` value and a `TreeConflict` is recorded,
/// unless `answers` holds a person's value for that pointer.
///
/// A key that occurs more than once in an object is matched by occurrence: the
/// n-th member with that key in one version with the n-th in the others
/// (`ObjectValue.Occurrence`); a conflict there has the key's JSON Pointer, and
/// a person's answer for it applies to each occurrence that conflicts. An
/// object or array one side moved to another member follows the move when it
/// is unambiguous (`MemberMoves`), with the other side's edits merged into it.
/// Merged containers keep the layout of ours, items they keep where they were
/// read (`ItemSource`), so what no side changed is written back byte for byte.
struct TreeMerge {
    let rules: MergeRules
    /// A person's values by JSON Pointer (a nil value: nothing there).
    var answers: [String: StructuredValue?] = [:]
    private(set) var conflicts: [TreeConflict] = []
    private var moves = MemberMoves()

    init(rules: MergeRules, answers: [String: StructuredValue?] = [:]) {
        self.rules = rules
        self.answers = answers
    }

    /// The merged document; nil when it merged to nothing (both sides' changes removed it).
    mutating func merge(base: StructuredValue?, ours: StructuredValue?, theirs: StructuredValue?) -> StructuredValue? {
        moves = MemberMoves(base: base, ours: ours, theirs: theirs)
        return merge(base, ours, theirs, tokens: [], steps: [])
    }

    private mutating func merge(
        _ base: StructuredValue?, _ ours: StructuredValue?, _ theirs: StructuredValue?,
        tokens: [String], steps: [PathStep]
    ) -> StructuredValue? {
        // An object one side added (or made of another value) that holds the new place of a value it moved: merged
        // member by member to get there.
        if base?.object == nil, theirs == base, case .object(let added) = ours, moves.aboveOursTo.contains(steps) {
            return .object(mergeObjects(ObjectValue(members: []), added, ObjectValue(members: []), tokens: tokens, steps: steps))
        }
        if base?.object == nil, ours == base, case .object(let added) = theirs, moves.aboveTheirsTo.contains(steps) {
            return .object(mergeObjects(ObjectValue(members: []), ObjectValue(members: []), added, tokens: tokens, steps: steps))
        }
        // A move's new place below: the containers on the way are merged, even where one side left them as they were.
        let moveBelow = moves.aboveOursTo.contains(steps) || moves.aboveTheirsTo.contains(steps)
        if !moveBelow, ours == theirs || base == theirs { return ours }
        // When only theirs changed, containers are still merged, so the parts theirs left alone keep ours' layout.
        if let base, let ours, let theirs {
            if case .object(let b) = base, case .object(let o) = ours, case .object(let t) = theirs {
                let conflictsBefore = conflicts.count
                let merged = mergeObjects(b, o, t, tokens: tokens, steps: steps)
                guard Self.duplicatesReadAlike(merged, [b, o, t]) else {
                    conflicts.removeSubrange(conflictsBefore...)
                    return conflict(
                        "it holds a key more than once, and a reader that takes the first or the last occurrence would read a value no version gives it",
                        base, ours, theirs, tokens: tokens, steps: steps)
                }
                return .object(merged)
            }
            if case .array(let b) = base, case .array(let o) = ours, case .array(let t) = theirs {
                return mergeArrays(b, o, t, tokens: tokens, steps: steps)
            }
        }
        if base == ours { return theirs }
        let reason: String
        switch (base, ours, theirs) {
        case (nil, _, _): reason = "added on both sides with different values"
        case (_, nil, _), (_, _, nil): reason = "removed on one side and changed on the other"
        case (let b?, let o?, let t?) where o.kindName != b.kindName || t.kindName != b.kindName:
            reason = "its type changed on one side and it was edited on the other"
        default: reason = "changed differently on both sides"
        }
        return conflict(reason, base, ours, theirs, tokens: tokens, steps: steps)
    }

    private mutating func conflict(
        _ reason: String, _ base: StructuredValue?, _ ours: StructuredValue?, _ theirs: StructuredValue?,
        tokens: [String], steps: [PathStep]
    ) -> StructuredValue? {
        let pointer = JSONPointer.string(tokens)
        if let answer = answers[pointer] { return answer }
        conflicts.append(TreeConflict(pointer: pointer, steps: steps, reason: reason))
        return .unresolved(UnresolvedValue(ours: ours, theirs: theirs, base: base))
    }

    // MARK: - Objects

    private mutating func mergeObjects(
        _ base: ObjectValue, _ ours: ObjectValue, _ theirs: ObjectValue,
        tokens: [String], steps: [PathStep]
    ) -> ObjectValue {
        let ourOccurrences = ours.occurrences, theirOccurrences = theirs.occurrences
        let baseIndex = base.memberIndex(), theirIndex = theirs.memberIndex(), ourIndex = ours.memberIndex()
        var merged: [ObjectValue.Member] = []
        var mergedOccurrences: [ObjectValue.Occurrence] = []
        var kept = Set<ObjectValue.Occurrence>()
        for (member, occurrence) in zip(ours.members, ourOccurrences) {
            let here = steps + [.member(member.key, occurrence: occurrence.count)]
            let baseValue = baseIndex(occurrence).map { base.members[$0].value }
            let theirValue = theirIndex(occurrence).map { theirs.members[$0].value }
            // Theirs moved it: it leaves here, and ours' edit of it is merged where it went.
            if theirValue == nil, moves.theirsFrom.contains(here) { continue }
            let value: StructuredValue?
            if baseValue == nil, theirValue == nil, let reason = moves.oursContested[here] {
                value = conflict(reason, nil, member.value, nil, tokens: tokens + [member.key], steps: here)
            } else if baseValue == nil, theirValue == nil, let move = moves.oursTo[here] {
                value = merge(move.base, member.value, move.other, tokens: tokens + [member.key], steps: here)
            } else {
                value = merge(baseValue, member.value, theirValue, tokens: tokens + [member.key], steps: here)
            }
            if let value {
                merged.append(member.holding(value))
                mergedOccurrences.append(occurrence)
                kept.insert(occurrence)
            }
        }
        // Ours' layout, unless ours has no member to show one and theirs has.
        let template = ours.members.isEmpty && !theirs.members.isEmpty ? theirs : ours
        guard theirOccurrences.contains(where: { ourIndex($0) == nil }) else {
            return ObjectValue(members: merged, isInline: template.isInline, layout: template.layout)
        }
        // Members only theirs has go after the member that precedes them in theirs, as they stood there.
        var insertions: [ObjectValue.Occurrence?: [ObjectValue.Member]] = [:]
        var anchor: ObjectValue.Occurrence?
        for (member, occurrence) in zip(theirs.members, theirOccurrences) {
            if ourIndex(occurrence) != nil {
                if kept.contains(occurrence) { anchor = occurrence }
                continue
            }
            let here = steps + [.member(member.key, occurrence: occurrence.count)]
            // Ours moved it: it leaves here, and theirs' edit of it is merged where it went.
            if moves.oursFrom.contains(here) { continue }
            let baseValue = baseIndex(occurrence).map { base.members[$0].value }
            let value: StructuredValue?
            if baseValue == nil, let reason = moves.theirsContested[here] {
                value = conflict(reason, nil, nil, member.value, tokens: tokens + [member.key], steps: here)
            } else if baseValue == nil, let move = moves.theirsTo[here] {
                value = merge(move.base, move.other, member.value, tokens: tokens + [member.key], steps: here)
            } else {
                value = merge(baseValue, nil, member.value, tokens: tokens + [member.key], steps: here)
            }
            if let value { insertions[anchor, default: []].append(member.holding(value)) }
        }
        guard !insertions.isEmpty else { return ObjectValue(members: merged, isInline: template.isInline, layout: template.layout) }
        var members = insertions[nil] ?? []
        for (member, occurrence) in zip(merged, mergedOccurrences) {
            members.append(member)
            members += insertions[occurrence] ?? []
        }
        return ObjectValue(members: members, isInline: template.isInline, layout: template.layout)
    }

    /// True unless a key occurs more than once in one of `versions` or in `merged`, and a reader that takes the first
    /// occurrence, or one that takes the last, reads in `merged` what no version gives that reader: occurrences edited,
    /// removed and added on two sides can each merge right and together mislead a reader. A scalar must be a value
    /// some version's reader reads; an object or array (merged member by member) must stand at the occurrence some
    /// version's reader reads.
    static func duplicatesReadAlike(_ merged: ObjectValue, _ versions: [ObjectValue]) -> Bool {
        let duplicated = Set(([merged] + versions).flatMap { $0.occurrences.filter { $0.count > 0 }.map { Array($0.key.utf8) } })
        guard !duplicated.isEmpty else { return true }
        /// The reader's occurrence of `key` in `object`: its value, and how many occurrences of the key precede it.
        func read(_ object: ObjectValue, _ key: [UInt8], last: Bool) -> (value: StructuredValue, count: Int)? {
            let values = object.members.filter { $0.key.utf8.elementsEqual(key) }.map(\.value)
            guard let value = last ? values.last : values.first else { return nil }
            return (value, last ? values.count - 1 : 0)
        }
        for key in duplicated {
            for last in [false, true] {
                let reading = read(merged, key, last: last)
                if case .unresolved? = reading?.value { continue }
                let agrees = versions.contains { version in
                    let other = read(version, key, last: last)
                    guard let reading, let other else { return reading == nil && other == nil }
                    return reading.value.object == nil && reading.value.array == nil
                        ? reading.value == other.value : reading.count == other.count
                }
                if !agrees { return false }
            }
        }
        return true
    }

    // MARK: - Arrays

    private mutating func mergeArrays(
        _ base: ArrayValue, _ ours: ArrayValue, _ theirs: ArrayValue,
        tokens: [String], steps: [PathStep]
    ) -> StructuredValue? {
        if let member = identityMember(of: [base, ours, theirs], at: tokens) {
            return mergeByIdentity(base, ours, theirs, member: member, tokens: tokens, steps: steps)
        }
        guard let origins = SequenceMerge.merge(base: base.elements, ours: ours.elements, theirs: theirs.elements) else {
            return conflict(
                "both sides changed the same part of the array", .array(base), .array(ours), .array(theirs),
                tokens: tokens, steps: steps)
        }
        var elements: [StructuredValue] = [], sources: [ItemSource?] = []
        elements.reserveCapacity(origins.count)
        sources.reserveCapacity(origins.count)
        for origin in origins {
            let array =
                switch origin {
                case .ours: ours
                case .theirs: theirs
                case .base: base
                }
            elements.append(array.elements[origin.index])
            sources.append(array.source(origin.index))
        }
        let template = ours.elements.isEmpty && !theirs.elements.isEmpty ? theirs : ours
        return .array(ArrayValue(elements: elements, sources: sources, isInline: template.isInline, layout: template.layout))
    }

    /// The first candidate member that every element of every array carries, with a scalar value unique within its array.
    private func identityMember(of arrays: [ArrayValue], at tokens: [String]) -> String? {
        guard arrays.contains(where: { !$0.elements.isEmpty }) else { return nil }
        candidates: for member in rules.identityCandidates(at: tokens) {
            for array in arrays {
                var seen = Set<StructuredValue>()
                for element in array.elements {
                    guard let identity = element.object?[member], Self.isScalar(identity), seen.insert(identity).inserted else {
                        continue candidates
                    }
                }
            }
            return member
        }
        return nil
    }

    /// A fixed order on identities: by kind, then by their text's bytes.
    static func precedes(_ lhs: StructuredValue, _ rhs: StructuredValue) -> Bool {
        func text(_ value: StructuredValue) -> [UInt8] {
            switch value {
            case .string(let text, _): Array(text.utf8)
            case .number(let text): Array(text.utf8)
            case .bool(let flag): Array((flag ? "true" : "false").utf8)
            case .real(let number): Array("\(number)".utf8)
            case .date(let date): Array("\(date.timeIntervalSince1970)".utf8)
            case .data(let data): Array(data)
            default: []
            }
        }
        if lhs.kindName != rhs.kindName { return lhs.kindName < rhs.kindName }
        return text(lhs).lexicographicallyPrecedes(text(rhs))
    }

    private static func isScalar(_ value: StructuredValue) -> Bool {
        switch value {
        case .string, .number, .bool, .real, .date, .data: true
        default: false
        }
    }

    private mutating func mergeByIdentity(
        _ base: ArrayValue, _ ours: ArrayValue, _ theirs: ArrayValue, member: String,
        tokens: [String], steps: [PathStep]
    ) -> StructuredValue? {
        // Identities become small numbers once; everything after indexes arrays by them.
        var identities: [StructuredValue] = []
        var numbers: [StructuredValue: Int] = [:]
        func numbered(_ array: ArrayValue) -> [Int] {
            array.elements.map { element in
                let identity = element.object![member]!
                if let number = numbers[identity] { return number }
                numbers[identity] = identities.count
                identities.append(identity)
                return identities.count - 1
            }
        }
        let baseIDs = numbered(base), ourIDs = numbered(ours), theirIDs = numbered(theirs)
        func positions(_ ids: [Int]) -> [Int?] {
            var positions = [Int?](repeating: nil, count: identities.count)
            for (index, id) in ids.enumerated() { positions[id] = index }
            return positions
        }
        let baseIndex = positions(baseIDs), ourIndex = positions(ourIDs), theirIndex = positions(theirIDs)

        // Each element merged on its own, its path indexed in the base where it exists there, else in ours, else in theirs.
        var merged = [StructuredValue?](repeating: nil, count: identities.count)
        for id in identities.indices {
            let position = baseIndex[id] ?? ourIndex[id] ?? theirIndex[id]!
            merged[id] = merge(
                baseIndex[id].map { base.elements[$0] }, ourIndex[id].map { ours.elements[$0] },
                theirIndex[id].map { theirs.elements[$0] },
                tokens: tokens + [String(position)], steps: steps + [.element(identityMember: member, identity: identities[id])])
        }

        // The order of the side that reordered; when both did, differently, a person decides.
        func reordered(_ ids: [Int], _ index: [Int?]) -> Bool {
            !baseIDs.lazy.filter { index[$0] != nil }.elementsEqual(ids.lazy.filter { baseIndex[$0] != nil })
        }
        let oursReordered = reordered(ourIDs, ourIndex), theirsReordered = reordered(theirIDs, theirIndex)
        if oursReordered && theirsReordered {
            func inAll(_ id: Int) -> Bool { baseIndex[id] != nil && ourIndex[id] != nil && theirIndex[id] != nil }
            if !ourIDs.lazy.filter(inAll).elementsEqual(theirIDs.lazy.filter(inAll)) {
                return conflict(
                    "both sides reordered the array differently", .array(base), .array(ours), .array(theirs),
                    tokens: tokens, steps: steps)
            }
        }
        // The base's elements stand in the reordering side's order; each side's new elements follow the element
        // before them on that side. Both sides' new elements after one place go in an order that does not depend on
        // which side is current, so merging either way round gives one result.
        let reorderer: [Int]? = theirsReordered && !oursReordered ? theirIDs : oursReordered ? ourIDs : nil
        var spine = (reorderer ?? baseIDs).filter { baseIndex[$0] != nil && merged[$0] != nil }
        var inSpine = [Bool](repeating: false, count: identities.count)
        for id in spine { inSpine[id] = true }
        for id in baseIDs where merged[id] != nil && !inSpine[id] { spine.append(id) }
        /// Each side's new elements, grouped by the spine element before them (-1: the start).
        func newElements(_ ids: [Int]) -> [Int: [Int]] {
            var groups: [Int: [Int]] = [:]
            var anchor = -1
            for id in ids {
                if baseIndex[id] != nil {
                    if inSpine[id] { anchor = id }
                    continue
                }
                if merged[id] != nil { groups[anchor, default: []].append(id) }
            }
            return groups
        }
        let ourNew = newElements(ourIDs), theirNew = newElements(theirIDs)
        var order: [Int] = []
        order.reserveCapacity(identities.count)
        var placed = [Bool](repeating: false, count: identities.count)
        func emit(after anchor: Int) {
            var groups = [ourNew[anchor] ?? [], theirNew[anchor] ?? []].filter { !$0.isEmpty }
            guard !groups.isEmpty else { return }
            if groups.count == 2, Self.precedes(identities[groups[1][0]], identities[groups[0][0]]) { groups.reverse() }
            for id in groups.joined() where !placed[id] {
                placed[id] = true
                order.append(id)
            }
        }
        emit(after: -1)
        for id in spine {
            order.append(id)
            emit(after: id)
        }
        // Each element where ours has it, else where theirs has it, for the bytes between elements that stayed together.
        let sources = order.map { id in ourIndex[id].map { ours.source($0) } ?? theirIndex[id].map { theirs.source($0) } ?? nil }
        let template = ours.elements.isEmpty && !theirs.elements.isEmpty ? theirs : ours
        return .array(
            ArrayValue(elements: order.map { merged[$0]! }, sources: sources, isInline: template.isInline, layout: template.layout))
    }
}
