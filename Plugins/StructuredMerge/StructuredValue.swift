import Foundation

/// A JSON or property-list value as read, with what it takes to write it back as it was.
///
/// Numbers keep their text (`1.50`, integers beyond 64 bits), strings their
/// source spelling next to their meaning, containers whether they were laid out
/// on one line. Equality is by meaning: strings compare by their unicode
/// scalars' bytes (never canonical equivalence), numbers by their text,
/// objects as maps whatever their member order; the layout is ignored.
enum StructuredValue: Hashable, Sendable {
    case object(ObjectValue)
    case array(ArrayValue)
    /// `text` is the decoded string; `source` its spelling with quotes, as the document wrote it.
    case string(text: String, source: String)
    case number(String)
    case bool(Bool)
    case null
    /// Property-list values JSON has no word for.
    case real(Double)
    case date(Date)
    case data(Data)
    /// Heads that could not be reconciled here; only in a merge's output, for conflict markers.
    indirect case unresolved(UnresolvedValue)

    static func string(_ text: String) -> StructuredValue { .string(text: text, source: JSONPrinter.quoted(text)) }

    static func == (lhs: StructuredValue, rhs: StructuredValue) -> Bool {
        switch (lhs, rhs) {
        case (.object(let a), .object(let b)): return a == b
        case (.array(let a), .array(let b)): return a.elements == b.elements
        case (.string(let a, _), .string(let b, _)): return a.utf8.elementsEqual(b.utf8)
        case (.number(let a), .number(let b)): return a.utf8.elementsEqual(b.utf8)
        case (.bool(let a), .bool(let b)): return a == b
        case (.null, .null): return true
        case (.real(let a), .real(let b)): return a == b
        case (.date(let a), .date(let b)): return a == b
        case (.data(let a), .data(let b)): return a == b
        default: return false
        }
    }

    func hash(into hasher: inout Hasher) {
        switch self {
        case .object(let object):
            hasher.combine(0)
            // Member order does not change an object's meaning, so the members' hashes are combined commutatively.
            var sum = 0
            for member in object.members {
                var inner = Hasher()
                Self.combine(member.key, into: &inner)
                inner.combine(member.value)
                sum = sum &+ inner.finalize()
            }
            hasher.combine(sum)
        case .array(let array):
            hasher.combine(1)
            hasher.combine(array.elements)
        case .string(let text, _):
            hasher.combine(2)
            Self.combine(text, into: &hasher)
        case .number(let text):
            hasher.combine(3)
            Self.combine(text, into: &hasher)
        case .bool(let value): hasher.combine(value)
        case .null: hasher.combine(4)
        case .real(let value): hasher.combine(value)
        case .date(let value): hasher.combine(value)
        case .data(let value): hasher.combine(value)
        case .unresolved: hasher.combine(5)
        }
    }

    /// A string's UTF-8 bytes into `hasher`, without copying them out.
    private static func combine(_ text: String, into hasher: inout Hasher) {
        var text = text
        text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        hasher.combine(text.utf8.count)
    }

    var object: ObjectValue? { if case .object(let object) = self { object } else { nil } }
    var array: ArrayValue? { if case .array(let array) = self { array } else { nil } }

    /// The kind, for people: "an object", "a string", …
    var kindName: String {
        switch self {
        case .object: "an object"
        case .array: "an array"
        case .string: "a string"
        case .number: "a number"
        case .bool: "a boolean"
        case .null: "null"
        case .real: "a real number"
        case .date: "a date"
        case .data: "data"
        case .unresolved: "a conflict"
        }
    }
}

/// Where an item of a container was read: what lets a merge write back the bytes between two items no side moved apart.
struct ItemSource: Sendable {
    /// The container it was read in, unique within the process (`JSONParser` numbers every container it reads).
    let container: Int
    /// Its position in that container.
    let index: Int
    /// The bytes between it and the next item there (whitespace, the comma, whitespace); nil for the last item.
    let separatorAfter: [UInt8]?

    /// The bytes that went between `self` and `next` where both were read, when `next` followed `self` there.
    func separator(before next: ItemSource?) -> [UInt8]? {
        guard let next, next.container == container, next.index == index + 1 else { return nil }
        return separatorAfter
    }
}

/// How a JSON container was written: the bytes inside its brackets that belong to no item.
struct ContainerLayout: Sendable {
    /// The container's number, as its items' `ItemSource.container` holds it.
    let id: Int
    /// After the opening bracket, before the first item (all the whitespace of an empty container).
    var opening: [UInt8]
    /// After the last item, before the closing bracket.
    var closing: [UInt8]
    /// The bytes between item i and item i + 1, for each i.
    var separators: [[UInt8]]

    /// The bytes to put between items `before` and `after` of a merge written in this container's layout.
    ///
    /// Items read one after the other keep what was between them. Otherwise,
    /// when one of them is this container's own item, the gap next to it here:
    /// after `before` (an item was removed or inserted after it, or the next
    /// one replaced), or before `after` (the one before it was replaced).
    /// Else this container's first separator, else one like its opening.
    func separator(between before: ItemSource?, and after: ItemSource?, afterComma: String) -> [UInt8] {
        if let before, let kept = before.separator(before: after) { return kept }
        if let before, before.container == id, before.index < separators.count { return separators[before.index] }
        if let after, after.container == id, after.index > 0, after.index - 1 < separators.count { return separators[after.index - 1] }
        if let first = separators.first { return first }
        // A container read with one item or none: its opening's line break and indentation when it spans lines.
        if opening.contains(UInt8(ascii: "\n")) { return [UInt8(ascii: ",")] + opening }
        return Array(("," + afterComma).utf8)
    }
}

/// An object's members in document order.
///
/// A key may occur more than once (JSON allows it, RFC 8259 advises against it): the merge matches the n-th member
/// with a key in one version to the n-th member with that key in the others (see `occurrences`).
struct ObjectValue: Equatable, Sendable {
    struct Member: Sendable {
        let key: String
        var value: StructuredValue
        /// Where the member was read, nil when it was not read from JSON.
        var source: ItemSource? = nil
        /// Its bytes before the value, as read: the key's spelling, whitespace, the colon, whitespace.
        var head: [UInt8]? = nil

        /// The same member holding `value` instead.
        func holding(_ value: StructuredValue) -> Member {
            var member = self
            member.value = value
            return member
        }
    }

    var members: [Member]
    /// True when the document wrote the object on one line.
    var isInline: Bool
    /// How the document wrote it; nil when it was not read from JSON.
    var layout: ContainerLayout?

    init(members: [Member], isInline: Bool = false, layout: ContainerLayout? = nil) {
        self.members = members
        self.isInline = isInline
        self.layout = layout
    }

    /// The first member called `key`, compared by bytes.
    subscript(key: String) -> StructuredValue? {
        members.first { $0.key.utf8.elementsEqual(key.utf8) }?.value
    }

    /// A member's key and how many members before it have the same key: what matches members across versions.
    struct Occurrence: Hashable {
        let key: [UInt8]
        let count: Int
    }

    /// Each member's `Occurrence`, in order.
    var occurrences: [Occurrence] {
        var seen: [[UInt8]: Int] = [:]
        return members.map { member in
            let key = Array(member.key.utf8)
            defer { seen[key, default: 0] += 1 }
            return Occurrence(key: key, count: seen[key] ?? 0)
        }
    }

    /// A lookup of members by occurrence, giving the member's index.
    func indexByOccurrence() -> [Occurrence: Int] {
        Dictionary(occurrences.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
    }

    static func == (lhs: ObjectValue, rhs: ObjectValue) -> Bool {
        guard lhs.members.count == rhs.members.count else { return false }
        if zip(lhs.members, rhs.members).allSatisfy({ $0.key.utf8.elementsEqual($1.key.utf8) && $0.value == $1.value }) { return true }
        let right = rhs.indexByOccurrence()
        return zip(lhs.occurrences, lhs.members).allSatisfy { occurrence, member in
            right[occurrence].map { rhs.members[$0].value == member.value } ?? false
        }
    }
}

/// An array's elements in order.
struct ArrayValue: Equatable, Sendable {
    var elements: [StructuredValue]
    /// Where each element was read (as many as `elements`), or empty when none was read from JSON.
    var sources: [ItemSource?]
    /// True when the document wrote the array on one line.
    var isInline: Bool
    /// How the document wrote it; nil when it was not read from JSON.
    var layout: ContainerLayout?

    init(elements: [StructuredValue], sources: [ItemSource?] = [], isInline: Bool = false, layout: ContainerLayout? = nil) {
        self.elements = elements
        self.sources = sources
        self.isInline = isInline
        self.layout = layout
    }

    /// Where element `index` was read, nil when unknown.
    func source(_ index: Int) -> ItemSource? { sources.isEmpty ? nil : sources[index] }

    static func == (lhs: ArrayValue, rhs: ArrayValue) -> Bool { lhs.elements == rhs.elements }
}

/// What two heads hold where they could not be merged (nil: the head has no value there), and what the base held.
struct UnresolvedValue: Hashable, Sendable {
    let ours: StructuredValue?
    let theirs: StructuredValue?
    /// The base's value there (nil: none), shown in diff3-style markers.
    var base: StructuredValue? = nil

    static func == (lhs: UnresolvedValue, rhs: UnresolvedValue) -> Bool { lhs.ours == rhs.ours && lhs.theirs == rhs.theirs }
    func hash(into hasher: inout Hasher) {
        hasher.combine(ours)
        hasher.combine(theirs)
    }
}
