import Foundation
import Testbed

/// A JSON value as the edit model sees it: objects keep their member order (for writing) and compare as maps.
indirect enum ModelValue: Equatable, CustomStringConvertible {
    case object([ModelMember])
    case array([ModelValue])
    case string(String)
    case number(Int)
    case bool(Bool)
    case null

    static func == (lhs: ModelValue, rhs: ModelValue) -> Bool {
        switch (lhs, rhs) {
        case (.object(let a), .object(let b)):
            a.count == b.count && a.allSatisfy { member in b.contains { $0.key == member.key && $0.value == member.value } }
        case (.array(let a), .array(let b)): a == b
        case (.string(let a), .string(let b)): a == b
        case (.number(let a), .number(let b)): a == b
        case (.bool(let a), .bool(let b)): a == b
        case (.null, .null): true
        default: false
        }
    }

    var members: [ModelMember]? { if case .object(let members) = self { members } else { nil } }
    var elements: [ModelValue]? { if case .array(let elements) = self { elements } else { nil } }

    /// A non-empty object or array: what the structured merge follows when one side moves it.
    var isContainer: Bool {
        switch self {
        case .object(let members): !members.isEmpty
        case .array(let elements): !elements.isEmpty
        default: false
        }
    }

    var description: String { String(decoding: ModelJSON(indent: nil).write(self), as: UTF8.self) }

    /// The value JSONSerialization read, with integers as numbers; nil for anything the model does not make.
    init?(parsed: Any) {
        switch parsed {
        case let dictionary as [String: Any]:
            var members: [ModelMember] = []
            for (key, value) in dictionary {
                guard let value = ModelValue(parsed: value) else { return nil }
                members.append(ModelMember(key: key, value: value))
            }
            self = .object(members)
        case let array as [Any]:
            var elements: [ModelValue] = []
            for element in array {
                guard let element = ModelValue(parsed: element) else { return nil }
                elements.append(element)
            }
            self = .array(elements)
        case let text as String: self = .string(text)
        case is NSNull: self = .null
        case let number as NSNumber:
            if String(cString: number.objCType) == "c" || type(of: parsed) == Bool.self {
                self = .bool(number.boolValue)
            } else {
                self = .number(number.intValue)
            }
        default: return nil
        }
    }

    /// The value at `path` (member keys), nil when there is none.
    func value(at path: [String]) -> ModelValue? {
        var value: ModelValue? = self
        for key in path { value = value?.members?.first { $0.key == key }?.value }
        return value
    }

    /// This value with the member at `path` replaced (nil removes it; a missing member is added at `position` or last).
    func replacing(_ path: [String], with new: ModelValue?, position: Int? = nil) -> ModelValue {
        guard let key = path.first, var members else { return new ?? self }
        let index = members.firstIndex { $0.key == key }
        if path.count == 1 {
            switch (index, new) {
            case (let index?, let new?): members[index].value = new
            case (let index?, nil): members.remove(at: index)
            case (nil, let new?): members.insert(ModelMember(key: key, value: new), at: min(position ?? members.count, members.count))
            case (nil, nil): break
            }
        } else if let index {
            members[index].value = members[index].value.replacing(Array(path.dropFirst()), with: new, position: position)
        }
        return .object(members)
    }
}

struct ModelMember: Equatable {
    var key: String
    var value: ModelValue
}

/// A JSON writer with a chosen layout, so that sides can differ in formatting and not in meaning.
struct ModelJSON {
    var indent: String?
    var colon = ": "
    var trailingNewline = true
    /// Objects at these paths are written on one line.
    var inlinePaths: Set<[String]> = []

    func write(_ value: ModelValue) -> Data {
        var out = ""
        write(value, path: [], depth: 0, into: &out, inline: indent == nil)
        if trailingNewline { out += "\n" }
        return Data(out.utf8)
    }

    private func write(_ value: ModelValue, path: [String], depth: Int, into out: inout String, inline: Bool) {
        func newline(_ depth: Int) -> String {
            guard !inline, let indent else { return "" }
            return "\n" + String(repeating: indent, count: depth)
        }
        switch value {
        case .object(let members):
            let inline = inline || inlinePaths.contains(path)
            guard !members.isEmpty else {
                out += "{}"
                return
            }
            out += "{"
            for (index, member) in members.enumerated() {
                out += (index > 0 ? (inline ? ", " : ",") : "") + newline(depth + 1)
                out += "\"\(member.key)\"" + colon
                write(member.value, path: path + [member.key], depth: depth + 1, into: &out, inline: inline)
            }
            out += newline(depth) + "}"
        case .array(let elements):
            out += "["
            for (index, element) in elements.enumerated() {
                out += index > 0 ? ", " : ""
                write(element, path: path, depth: depth + 1, into: &out, inline: true)
            }
            out += "]"
        case .string(let text): out += "\"\(text)\""
        case .number(let number): out += String(number)
        case .bool(let flag): out += flag ? "true" : "false"
        case .null: out += "null"
        }
    }
}

/// Where an edit touches its base: a member (by keys), or an element or gap of an array of scalars (by base index).
enum ModelFootprint: Equatable {
    case member([String])
    /// An element removed (`action` nil) or replaced by a value (its text): the same action on two sides is one change.
    case element([String], Int, action: String?)
    case gap([String], Int)

    var isMember: Bool { if case .member = self { true } else { false } }

    var path: [String] {
        switch self {
        case .member(let path), .element(let path, _, _), .gap(let path, _): path
        }
    }

    /// Two edits that touch these cannot both be applied as they stand: one place, or one inside the other.
    func overlaps(_ other: ModelFootprint) -> Bool {
        func isPrefix(_ a: [String], _ b: [String]) -> Bool { a.count <= b.count && Array(b.prefix(a.count)) == a }
        switch (self, other) {
        case (.member(let a), .member(let b)): return isPrefix(a, b) || isPrefix(b, a)
        case (.member(let a), _): return isPrefix(a, other.path)
        case (_, .member(let b)): return isPrefix(b, path)
        case (.element(let a, let i, let x), .element(let b, let j, let y)): return a == b && i == j && x != y
        case (.gap(let a, let i), .gap(let b, let j)): return a == b && i == j
        default: return false
        }
    }
}

/// One side's edit of a base document, in the base's coordinates.
enum ModelEdit: Equatable {
    case set([String], ModelValue)
    case delete([String])
    case add(parent: [String], key: String, value: ModelValue, position: Int)
    /// A member moved (renamed, or re-nested into an object the base has) to `to`, at `position` there.
    case move(from: [String], to: [String], position: Int)
    /// A member moved into a new object `holder` the move adds under `parent`: `{key: value}`.
    case moveIntoNew(from: [String], parent: [String], holder: String, key: String)
    /// An object's members put in another order (by key); meaning unchanged.
    case reorder([String], [String])
    /// An array of scalars: elements removed and replaced, new ones inserted before base index `gap`.
    case array([String], deletes: [Int], sets: [Int: ModelValue], inserts: [Int: [ModelValue]])

    var footprints: [ModelFootprint] {
        switch self {
        case .set(let path, _), .delete(let path): [.member(path)]
        case .add(let parent, let key, _, _): [.member(parent + [key])]
        case .move(let from, let to, _): [.member(from), .member(to)]
        case .moveIntoNew(let from, let parent, let holder, _): [.member(from), .member(parent + [holder])]
        case .reorder: []
        case .array(let path, let deletes, let sets, let inserts):
            deletes.map { .element(path, $0, action: nil) } + sets.keys.sorted().map { .element(path, $0, action: sets[$0]!.description) }
                + inserts.keys.sorted().map { .gap(path, $0) }
        }
    }

    /// The member this edit moves away, and where to.
    var movedFrom: [String]? {
        switch self {
        case .move(let from, _, _), .moveIntoNew(let from, _, _, _): from
        default: nil
        }
    }

    var movedTo: [String]? {
        switch self {
        case .move(_, let to, _): to
        case .moveIntoNew(_, let parent, let holder, let key): parent + [holder, key]
        default: nil
        }
    }

    /// The same edit with paths under `from` moved under `to`.
    func rebased(from: [String], to: [String]) -> ModelEdit {
        func move(_ path: [String]) -> [String] {
            path.count >= from.count && Array(path.prefix(from.count)) == from ? to + path.dropFirst(from.count) : path
        }
        switch self {
        case .set(let path, let value): return .set(move(path), value)
        case .delete(let path): return .delete(move(path))
        case .add(let parent, let key, let value, let position): return .add(parent: move(parent), key: key, value: value, position: position)
        case .move(let source, let target, let position): return .move(from: move(source), to: move(target), position: position)
        case .moveIntoNew(let source, let parent, let holder, let key):
            return .moveIntoNew(from: move(source), parent: move(parent), holder: holder, key: key)
        case .reorder(let path, let order): return .reorder(move(path), order)
        case .array(let path, let deletes, let sets, let inserts): return .array(move(path), deletes: deletes, sets: sets, inserts: inserts)
        }
    }
}

/// Edits applied to a document; edits of one side never overlap, so their order does not matter but for moves,
/// which take their value before anything is put in place.
enum ModelApply {
    static func apply(_ edits: [ModelEdit], to base: ModelValue) -> ModelValue {
        var document = base
        // Reorders first: every other edit names members by key.
        for case .reorder(let path, let order) in edits {
            guard let members = document.value(at: path)?.members else { continue }
            let sorted = members.sorted { (order.firstIndex(of: $0.key) ?? .max) < (order.firstIndex(of: $1.key) ?? .max) }
            document = path.isEmpty ? .object(sorted) : document.replacing(path, with: .object(sorted))
        }
        // Moves go first, each taking its value where it stands then: a move rebased into a container the other side
        // moved waits for that container to be in its new place.
        var moves = edits.filter { $0.movedFrom != nil }
        func placeable(_ edit: ModelEdit) -> Bool {
            guard let from = edit.movedFrom, let to = edit.movedTo, document.value(at: from) != nil else { return false }
            let parent = if case .moveIntoNew(_, let parent, _, _) = edit { parent } else { Array(to.dropLast()) }
            return document.value(at: parent)?.members != nil
        }
        while let next = moves.firstIndex(where: placeable) {
            let edit = moves.remove(at: next)
            let value = document.value(at: edit.movedFrom!)!
            document = document.replacing(edit.movedFrom!, with: nil)
            switch edit {
            case .move(_, let to, let position): document = document.replacing(to, with: value, position: position)
            case .moveIntoNew(_, let parent, let holder, let key):
                document = document.replacing(parent + [holder], with: .object([ModelMember(key: key, value: value)]))
            default: break
            }
        }
        // Arrays: one batch per array, both sides' batches joined.
        var batches: [[String]: (deletes: Set<Int>, sets: [Int: ModelValue], inserts: [Int: [ModelValue]])] = [:]
        for case .array(let path, let deletes, let sets, let inserts) in edits {
            var batch = batches[path] ?? ([], [:], [:])
            batch.deletes.formUnion(deletes)
            batch.sets.merge(sets) { $1 }
            for (gap, values) in inserts { batch.inserts[gap, default: []] += values }
            batches[path] = batch
        }
        for edit in edits {
            switch edit {
            case .set(let path, let value): document = document.replacing(path, with: value)
            case .delete(let path): document = document.replacing(path, with: nil)
            case .add(let parent, let key, let value, let position):
                document = document.replacing(parent + [key], with: value, position: position)
            default: break
            }
        }
        for (path, batch) in batches {
            guard let elements = document.value(at: path)?.elements else { continue }
            var result: [ModelValue] = []
            for index in 0...elements.count {
                result += batch.inserts[index] ?? []
                guard index < elements.count, !batch.deletes.contains(index) else { continue }
                result.append(batch.sets[index] ?? elements[index])
            }
            document = document.replacing(path, with: .array(result))
        }
        return document
    }
}

/// What a correct structured merge of two sides' edits must give: a value, or a conflict.
enum ModelMerge: Equatable {
    case value(ModelValue)
    case conflict

    /// Identical edits count once; edits that do not overlap are all applied; a container moved on one side takes the
    /// other side's edits inside it along (they are rebased onto its new place); anything else that overlaps is a
    /// conflict, which a merge must report rather than guess.
    static func merge(base: ModelValue, ours: [ModelEdit], theirs: [ModelEdit]) -> ModelMerge {
        let shared = ours.filter { theirs.contains($0) }
        let ours = ours.filter { !shared.contains($0) }, theirs = theirs.filter { !shared.contains($0) }
        var carries: [(from: [String], to: [String])] = []
        var carriedOurs: [Int] = [], carriedTheirs: [Int] = []
        for (mineIndex, mine) in ours.enumerated() {
            for (otherIndex, other) in theirs.enumerated()
            where mine.footprints.contains(where: { footprint in other.footprints.contains(where: footprint.overlaps) }) {
                // Only an edit strictly inside a container the other side moved, with nothing of its side at the new
                // place, may overlap: it is rebased onto the new place.
                if let carry = Self.carriedMove(other, carrying: mine, base: base) {
                    carries.append(carry)
                    carriedOurs.append(mineIndex)
                } else if let carry = Self.carriedMove(mine, carrying: other, base: base) {
                    carries.append(carry)
                    carriedTheirs.append(otherIndex)
                } else {
                    return .conflict
                }
            }
        }
        // A carried edit follows every move above it, one after the other (a container moved into one the other side
        // moved, and so on).
        func carried(_ edit: ModelEdit) -> ModelEdit {
            var edit = edit
            for _ in 0..<carries.count {
                for carry in carries where edit.footprints.contains(where: { isInside($0, carry.from) }) {
                    edit = edit.rebased(from: carry.from, to: carry.to)
                }
            }
            return edit
        }
        let rebasedOurs = ours.enumerated().map { carriedOurs.contains($0.offset) ? carried($0.element) : $0.element }
        let rebasedTheirs = theirs.enumerated().map { carriedTheirs.contains($0.offset) ? carried($0.element) : $0.element }
        return .value(ModelApply.apply(shared + rebasedOurs + rebasedTheirs, to: base))
    }

    /// Where `move` takes a container that `edit` changes inside: `edit` of the other side follows it there.
    private static func carriedMove(_ move: ModelEdit, carrying edit: ModelEdit, base: ModelValue) -> (from: [String], to: [String])? {
        guard let from = move.movedFrom, let to = move.movedTo, let moved = base.value(at: from), moved.isContainer,
            edit.footprints.contains(where: { isInside($0, from) }),
            edit.footprints.allSatisfy({ isInside($0, from) || !move.footprints.contains(where: $0.overlaps) }),
            !edit.footprints.contains(where: { $0.overlaps(.member(to)) })
        else { return nil }
        // A replacement of the whole container inside it by another kind of value is not an edit inside it.
        if case .set(let path, let value) = edit, path == from, (value.members == nil) != (moved.members == nil) { return nil }
        return (from, to)
    }

    /// True for a place strictly inside the member at `path`, or an array element or gap of the array at `path`.
    private static func isInside(_ footprint: ModelFootprint, _ path: [String]) -> Bool {
        let inner = footprint.path
        guard inner.count >= path.count, Array(inner.prefix(path.count)) == path else { return false }
        if case .member = footprint { return inner.count > path.count }
        return true
    }
}

/// Random documents and random edits on two sides, seeded: scalars unique across a document, so that a moved value is
/// recognisable, and new keys and values that only one side makes.
struct ModelScenario {
    let base: ModelValue
    let ours: [ModelEdit]
    let theirs: [ModelEdit]
    let oursLayout: ModelJSON
    let theirsLayout: ModelJSON
    let baseLayout: ModelJSON

    var baseData: Data { baseLayout.write(base) }
    var oursData: Data { oursLayout.write(ModelApply.apply(ours, to: base)) }
    var theirsData: Data { theirsLayout.write(ModelApply.apply(theirs, to: base)) }

    static func make(_ random: inout SeededRandom) -> ModelScenario {
        var counter = 0
        func fresh(_ prefix: String) -> String {
            counter += 1
            return "\(prefix)\(counter)"
        }
        func scalar() -> ModelValue {
            switch random.int(0...3) {
            case 0:
                .number(
                    random.int(1000...9999) * 100
                        + {
                            counter += 1
                            return counter % 100
                        }())
            default: .string(fresh("v"))
            }
        }
        func value(depth: Int) -> ModelValue {
            switch depth < 3 ? random.int(0...5) : 0 {
            case 0, 1, 2: return scalar()
            case 3: return .array((0..<random.int(0...4)).map { _ in scalar() })
            default: return .object((0..<random.int(1...4)).map { _ in ModelMember(key: fresh("k"), value: value(depth: depth + 1)) })
            }
        }
        let base = ModelValue.object((0..<random.int(3...7)).map { _ in ModelMember(key: fresh("k"), value: value(depth: 1)) })

        // Every member path of the base, and which of them are objects and arrays.
        var members: [[String]] = [], objects: [[String]] = [[]], arrays: [[String]] = []
        func walk(_ value: ModelValue, _ path: [String]) {
            for member in value.members ?? [] {
                let here = path + [member.key]
                members.append(here)
                if member.value.members != nil { objects.append(here) }
                if member.value.elements != nil { arrays.append(here) }
                walk(member.value, here)
            }
        }
        walk(base, [])

        func edits(_ side: String) -> [ModelEdit] {
            var made: [ModelEdit] = []
            func free(_ footprints: [ModelFootprint]) -> Bool {
                // One batch per array and side.
                !made.contains {
                    $0.footprints.contains { mine in footprints.contains { mine.overlaps($0) || (mine.path == $0.path && !mine.isMember) } }
                }
            }
            for _ in 0..<random.int(1...4) {
                let edit: ModelEdit
                switch random.int(0...9) {
                case 0, 1:
                    // A container is replaced by a scalar: an object or array put in its place would be merged member
                    // by member, or element by element, not as the one change the model sees.
                    let path = random.pick(members)
                    let new = base.value(at: path)?.isContainer == false && random.chance(30) ? value(depth: 2) : scalar()
                    guard new != base.value(at: path) else { continue }
                    edit = .set(path, new)
                case 2: edit = .delete(random.pick(members))
                case 3:
                    let parent = random.pick(objects)
                    edit = .add(parent: parent, key: fresh(side), value: value(depth: parent.count + 1), position: random.int(0...4))
                case 4, 5:
                    // An empty array tells nothing of where it came from: moved, it is a removal and an addition.
                    let from = random.pick(members)
                    guard base.value(at: from) != .array([]) else { continue }
                    edit = .move(from: from, to: Array(from.dropLast()) + [fresh(side)], position: random.int(0...4))
                case 6:
                    let from = random.pick(members)
                    guard base.value(at: from) != .array([]) else { continue }
                    let parent = random.pick(objects)
                    guard !(parent.count >= from.count && Array(parent.prefix(from.count)) == from) else { continue }
                    edit =
                        random.chance(50)
                        ? .move(from: from, to: parent + [fresh(side)], position: random.int(0...4))
                        : .moveIntoNew(from: from, parent: parent, holder: fresh(side), key: fresh(side))
                case 7:
                    let path = random.pick(objects)
                    guard let keys = base.value(at: path)?.members?.map(\.key), keys.count > 1 else { continue }
                    var order = keys
                    for index in order.indices.reversed() { order.swapAt(index, random.int(0...index)) }
                    edit = .reorder(path, order)
                default:
                    guard !arrays.isEmpty else { continue }
                    let path = random.pick(arrays)
                    let count = base.value(at: path)?.elements?.count ?? 0
                    var deletes: [Int] = [], sets: [Int: ModelValue] = [:], inserts: [Int: [ModelValue]] = [:]
                    for index in 0..<count {
                        switch random.int(0...9) {
                        case 0: deletes.append(index)
                        case 1: sets[index] = scalar()
                        default: break
                        }
                    }
                    // Insertions between elements this side leaves alone: next to a removal or replacement, which of the
                    // two an insertion belongs to is a matter of reading, for the model as for git.
                    let changed = Set(deletes).union(sets.keys)
                    for gap in 0...count where !changed.contains(gap - 1) && !changed.contains(gap) && random.chance(count == 0 ? 60 : 25) {
                        inserts[gap] = [scalar()]
                    }
                    guard !deletes.isEmpty || !sets.isEmpty || !inserts.isEmpty else { continue }
                    edit = .array(path, deletes: deletes, sets: sets, inserts: inserts)
                }
                // A move's new parent must survive this side's other edits, and its new place be free.
                if let to = edit.movedTo, made.contains(where: { $0.footprints.contains { $0.overlaps(.member(Array(to.dropLast()))) } }) {
                    continue
                }
                if made.contains(where: { $0.movedTo.map { to in edit.footprints.contains { $0.overlaps(.member(Array(to.dropLast()))) } } ?? false })
                {
                    continue
                }
                if case .reorder(let path, _) = edit, made.contains(where: { if case .reorder(path, _) = $0 { true } else { false } }) { continue }
                if free(edit.footprints) { made.append(edit) }
            }
            return made
        }
        var ours = edits("o"), theirs = edits("t")
        // Now and then both sides make the same edit, or an edit of one side overlaps one of the other on purpose.
        if random.chance(20), let shared = ours.first,
            !theirs.contains(where: { $0.footprints.contains { f in shared.footprints.contains { f.overlaps($0) || f.path == $0.path } } })
        {
            theirs.append(shared)
        }
        if random.chance(25), let mine = theirs.first, case .move(let from, _, _) = mine {
            ours.removeAll { $0.footprints.contains { $0.overlaps(.member(from)) } }
            ours.append(random.chance(50) ? .delete(from) : .move(from: from, to: Array(from.dropLast()) + [fresh("o")], position: 0))
        }
        func layout() -> ModelJSON {
            var layout = ModelJSON(indent: random.pick([nil, "  ", "  ", "    ", "\t"]))
            layout.colon = random.chance(80) ? ": " : ":"
            layout.trailingNewline = random.chance(80)
            if random.chance(20), let path = objects.dropFirst().first { layout.inlinePaths = [path] }
            return layout
        }
        let baseLayout = layout()
        return ModelScenario(
            base: base, ours: ours, theirs: theirs, oursLayout: random.chance(70) ? baseLayout : layout(),
            theirsLayout: random.chance(70) ? baseLayout : layout(), baseLayout: baseLayout)
    }
}
