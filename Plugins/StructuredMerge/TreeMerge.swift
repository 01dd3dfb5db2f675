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
    /// True while the merge is at or below a path the field rules decided something under: elsewhere (most of a
    /// large document) no decision is looked up.
    private var fieldsBelow: Bool
    private var moves = MemberMoves()

    /// What the fields' merge rules decided (`FieldRulePass`), taken where the merge meets each path.
    let fields: FieldRulePass?

    init(rules: MergeRules, answers: [String: StructuredValue?] = [:], fields: FieldRulePass? = nil) {
        self.rules = rules
        self.answers = answers
        self.fields = fields
        fieldsBelow = fields.map { !$0.decisions.isEmpty } ?? false
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
        let wasBelow = fieldsBelow
        defer { fieldsBelow = wasBelow }
        if fieldsBelow, let fields {
            switch fields.decisions[steps] {
            case .value(let value)?: return value
            case .person(let reason)?: return conflict(reason, base, ours, theirs, tokens: tokens, steps: steps)
            case nil: break
            }
            fieldsBelow = fields.above.contains(steps)
        }
        // An object one side added (or made of another value) that holds the new place of a value it moved: merged
        // member by member to get there.
        if base?.object == nil, theirs == base, case .object(let added) = ours, moves.aboveOursTo.contains(steps) {
            return .object(mergeObjects(ObjectValue(members: []), added, ObjectValue(members: []), tokens: tokens, steps: steps))
        }
        if base?.object == nil, ours == base, case .object(let added) = theirs, moves.aboveTheirsTo.contains(steps) {
            return .object(mergeObjects(ObjectValue(members: []), ObjectValue(members: []), added, tokens: tokens, steps: steps))
        }
        // A move's new place below: the containers on the way are merged, even where one side left them as they were.
        // (Only where every side has a container to walk into: where one has none, it is taken or conflicts as it is.)
        let containers = [base, ours, theirs].allSatisfy { $0?.object != nil } || [base, ours, theirs].allSatisfy { $0?.array != nil }
        let moveBelow =
            moves.aboveOursTo.contains(steps) || moves.aboveTheirsTo.contains(steps) || (containers && fieldsBelow)
        if !moveBelow, ours == theirs || base == theirs {
            // Equal in meaning. Where theirs only rewrote the value (reordered, respaced) and ours left its bytes as
            // the base has them, theirs' bytes: a container to merge when ours changed something inside, else whole.
            guard let base, let ours, let theirs, let baseBytes = base.readBytes, let theirBytes = theirs.readBytes,
                baseBytes != theirBytes
            else { return ours }
            if ours.readBytes == baseBytes { return theirs }
            guard base == theirs, ours.kindName == theirs.kindName, ours.object != nil || ours.array != nil else { return ours }
        }
        // When only theirs changed, containers are still merged, so the parts theirs left alone keep ours' layout.
        if let base, let ours, let theirs {
            if case .object(let b) = base, case .object(let o) = ours, case .object(let t) = theirs {
                if rules.siblings == .ask, Self.bothChangedMembers(b, o, t) {
                    return conflict(
                        "both sides changed members of this object, and siblings = ask leaves that to a person", base, ours, theirs,
                        tokens: tokens, steps: steps)
                }
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

    /// Members merged one by one. The side that leads gives the order, the layout and each member's key spelling:
    /// ours, unless ours left the object laid out as the base has it and theirs did not (`theirsLeads`); members only
    /// the other side has go after the member that precedes them there.
    private mutating func mergeObjects(
        _ base: ObjectValue, _ ours: ObjectValue, _ theirs: ObjectValue,
        tokens: [String], steps: [PathStep]
    ) -> ObjectValue {
        let theirsLead = Self.theirsLead(base: Self.layoutParts(base), ours: Self.layoutParts(ours), theirs: Self.layoutParts(theirs))
        let (lead, follow) = theirsLead ? (theirs, ours) : (ours, theirs)
        let leadOccurrences = lead.occurrences, followOccurrences = follow.occurrences
        let baseIndex = base.memberIndex(), followIndex = follow.memberIndex(), leadIndex = lead.memberIndex()
        var merged: [ObjectValue.Member] = []
        var mergedOccurrences: [ObjectValue.Occurrence] = []
        var kept = Set<ObjectValue.Occurrence>()
        for (member, occurrence) in zip(lead.members, leadOccurrences) {
            let other = followIndex(occurrence).map { follow.members[$0].value }
            let (ourValue, theirValue) = theirsLead ? (other, member.value) : (member.value, other)
            let baseValue = baseIndex(occurrence).map { base.members[$0].value }
            guard let value = mergeMember(member.key, occurrence, baseValue, ourValue, theirValue, tokens: tokens, steps: steps)
            else { continue }
            if let value {
                merged.append(member.holding(value))
                mergedOccurrences.append(occurrence)
                kept.insert(occurrence)
            }
        }
        // The leading side's layout, unless it has no member to show one and the other has.
        let template = lead.members.isEmpty && !follow.members.isEmpty ? follow : lead
        guard followOccurrences.contains(where: { leadIndex($0) == nil }) else {
            return ObjectValue(members: merged, isInline: template.isInline, layout: template.layout)
        }
        var insertions: [ObjectValue.Occurrence?: [ObjectValue.Member]] = [:]
        var anchor: ObjectValue.Occurrence?
        for (member, occurrence) in zip(follow.members, followOccurrences) {
            if leadIndex(occurrence) != nil {
                if kept.contains(occurrence) { anchor = occurrence }
                continue
            }
            let (ourValue, theirValue) = theirsLead ? (member.value, nil) : (nil, member.value)
            let baseValue = baseIndex(occurrence).map { base.members[$0].value }
            guard let value = mergeMember(member.key, occurrence, baseValue, ourValue, theirValue, tokens: tokens, steps: steps)
            else { continue }
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

    /// One member merged: nil when a move takes it away from here (it is merged where it went), else its value (nil:
    /// no member). A member one side moved here is merged with the other side's edit of it where it was; one whose
    /// move the other side contradicts is a conflict.
    private mutating func mergeMember(
        _ key: String, _ occurrence: ObjectValue.Occurrence, _ baseValue: StructuredValue?, _ ourValue: StructuredValue?,
        _ theirValue: StructuredValue?, tokens: [String], steps: [PathStep]
    ) -> StructuredValue?? {
        let here = steps + [.member(key, occurrence: occurrence.count)], tokens = tokens + [key]
        if ourValue == nil, moves.oursFrom.contains(here) { return nil }
        if theirValue == nil, moves.theirsFrom.contains(here) { return nil }
        if baseValue == nil, theirValue == nil, let ourValue {
            if let reason = moves.oursContested[here] { return .some(conflict(reason, nil, ourValue, nil, tokens: tokens, steps: here)) }
            if let move = moves.oursTo[here] { return .some(merge(move.base, ourValue, move.other, tokens: tokens, steps: here)) }
        }
        if baseValue == nil, ourValue == nil, let theirValue {
            if let reason = moves.theirsContested[here] { return .some(conflict(reason, nil, nil, theirValue, tokens: tokens, steps: here)) }
            if let move = moves.theirsTo[here] { return .some(merge(move.base, move.other, theirValue, tokens: tokens, steps: here)) }
        }
        return .some(merge(baseValue, ourValue, theirValue, tokens: tokens, steps: here))
    }

    /// The bytes of a container that are not its items' values, in order: its whitespace inside the brackets, the
    /// separators between items and each member's key spelling. Nil when it was not read as JSON, or an item in it was
    /// not read there (a merge made it).
    static func layoutParts(_ object: ObjectValue) -> [ArraySlice<UInt8>]? {
        guard let layout = object.layout else { return nil }
        var parts = [layout.opening, layout.closing]
        var previous: ItemSource?
        for member in object.members {
            guard let source = member.source, source.container.isSame(as: layout) else { return nil }
            parts.append(source.head)
            if let previous { parts.append(previous.separator(before: source) ?? ArraySlice("\u{0}".utf8)) }
            previous = source
        }
        return parts
    }

    static func layoutParts(_ array: ArrayValue) -> [ArraySlice<UInt8>]? {
        guard let layout = array.layout else { return nil }
        var parts = [layout.opening, layout.closing]
        var previous: ItemSource?
        for index in array.elements.indices {
            guard let source = array.source(index), source.container.isSame(as: layout) else { return nil }
            if let previous { parts.append(previous.separator(before: source) ?? ArraySlice("\u{0}".utf8)) }
            previous = source
        }
        return parts
    }

    /// True when theirs rewrote a container's layout (its order, spacing or line breaks) and ours left it as the base
    /// has it: the merge then takes theirs' layout there, as it takes the changed side's bytes for values.
    static func theirsLead(base: [ArraySlice<UInt8>]?, ours: [ArraySlice<UInt8>]?, theirs: [ArraySlice<UInt8>]?) -> Bool {
        guard let base, let ours, let theirs else { return false }
        return ours.elementsEqual(base) && !theirs.elementsEqual(base)
    }

    /// True when each side changed a member of this object the other did not change alike: added, removed or given
    /// another value. A member that is an object on every side counts only for the changes inside it, at its own level.
    static func bothChangedMembers(_ base: ObjectValue, _ ours: ObjectValue, _ theirs: ObjectValue) -> Bool {
        func changes(_ side: ObjectValue) -> [ObjectValue.Occurrence: StructuredValue?] {
            let baseIndex = base.memberIndex(), sideIndex = side.memberIndex()
            var changed: [ObjectValue.Occurrence: StructuredValue?] = [:]
            for occurrence in Set(base.occurrences).union(side.occurrences) {
                let was = baseIndex(occurrence).map { base.members[$0].value }, now = sideIndex(occurrence).map { side.members[$0].value }
                guard was != now, !(was?.object != nil && now?.object != nil) else { continue }
                changed[occurrence] = now
            }
            return changed
        }
        let ourChanges = changes(ours), theirChanges = changes(theirs)
        guard !ourChanges.isEmpty, !theirChanges.isEmpty else { return false }
        return ourChanges.count != theirChanges.count
            || ourChanges.contains { occurrence, value in theirChanges[occurrence].map { $0 != value } ?? true }
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
        // The side that leads keeps the elements both keep where it has them, with its layout (see `mergeObjects`).
        let theirsLead = Self.theirsLead(base: Self.layoutParts(base), ours: Self.layoutParts(ours), theirs: Self.layoutParts(theirs))
        let merged =
            theirsLead
            ? SequenceMerge.merge(base: base.elements, ours: theirs.elements, theirs: ours.elements)?.map(\.swappingSides)
            : SequenceMerge.merge(base: base.elements, ours: ours.elements, theirs: theirs.elements)
        guard let origins = merged else {
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
        let (lead, follow) = theirsLead ? (theirs, ours) : (ours, theirs)
        let template = lead.elements.isEmpty && !follow.elements.isEmpty ? follow : lead
        return .array(ArrayValue(elements: elements, sources: sources, isInline: template.isInline, layout: template.layout))
    }

    /// The first candidate member that every element of every array carries, with a scalar value unique within its array.
    private func identityMember(of arrays: [ArrayValue], at tokens: [String]) -> String? {
        // A field rule's `id=MEMBER`, where every element carries it (the rules checked the heads', but a step's result
        // can hold an element a person must settle).
        if let member = fields?.identity(at: tokens),
            arrays.allSatisfy({ $0.elements.allSatisfy { $0.object?[member].map(Self.isScalar) ?? false } })
        {
            return member
        }
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
