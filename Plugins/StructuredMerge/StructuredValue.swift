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

    /// The bytes this value was read from, nil for one a merge made or that was not read as JSON: what tells a side
    /// that only rewrote a value (reordered, respaced) from one that left it alone.
    var readBytes: ArraySlice<UInt8>? {
        switch self {
        case .object(let object):
            guard let layout = object.layout, object.members.count == layout.itemCount,
                object.members.indices.allSatisfy({ index in
                    object.members[index].source.map { $0.container.isSame(as: layout) && $0.index == index } ?? false
                })
            else { return nil }
            return layout.bytes
        case .array(let array):
            guard let layout = array.layout, array.elements.count == layout.itemCount,
                array.sources.isEmpty
                    || array.sources.indices.allSatisfy({ index in
                        array.sources[index].map { $0.container.isSame(as: layout) && $0.index == index } ?? false
                    })
            else { return nil }
            return layout.bytes
        case .string(_, let source): return ArraySlice(source.utf8)
        case .number(let text): return ArraySlice(text.utf8)
        case .bool(let flag): return ArraySlice((flag ? "true" : "false").utf8)
        case .null: return ArraySlice("null".utf8)
        default: return nil
        }
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

/// An object's members in document order.
///
/// A key may occur more than once (JSON allows it, RFC 8259 advises against it): the merge matches the n-th member
/// with a key in one version to the n-th member with that key in the others (see `occurrences`).
struct ObjectValue: Equatable, Sendable {
    struct Member: Sendable {
        let key: String
        var value: StructuredValue
        /// Where the member was read (and so its key's spelling), nil when it was not read from JSON.
        var source: ItemSource? = nil

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
    /// Keys compare by their bytes, never by canonical equivalence.
    struct Occurrence: Hashable {
        let key: String
        let count: Int

        static func == (lhs: Occurrence, rhs: Occurrence) -> Bool { lhs.count == rhs.count && lhs.key.utf8.elementsEqual(rhs.key.utf8) }

        func hash(into hasher: inout Hasher) {
            var key = key
            key.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
            hasher.combine(count)
        }
    }

    /// Each member's `Occurrence`, in order.
    var occurrences: [Occurrence] {
        // Small objects (most records) are scanned; a table only for large ones.
        if members.count <= 16 {
            return members.indices.map { index in
                let key = members[index].key
                return Occurrence(key: key, count: members[..<index].count { $0.key.utf8.elementsEqual(key.utf8) })
            }
        }
        var seen: [Occurrence: Int] = [:]
        return members.map { member in
            let first = Occurrence(key: member.key, count: 0)
            defer { seen[first, default: 0] += 1 }
            return Occurrence(key: member.key, count: seen[first] ?? 0)
        }
    }

    /// A lookup of members by occurrence, giving the member's index.
    func indexByOccurrence() -> [Occurrence: Int] {
        Dictionary(occurrences.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// A lookup of members by occurrence: a scan for small objects (most records), a table for large ones.
    struct MemberLookup {
        let members: [Member]
        let table: [Occurrence: Int]?

        /// The index of the member with that occurrence, nil when there is none.
        func callAsFunction(_ occurrence: Occurrence) -> Int? {
            if let table { return table[occurrence] }
            var seen = 0
            for (index, member) in members.enumerated() where member.key.utf8.elementsEqual(occurrence.key.utf8) {
                if seen == occurrence.count { return index }
                seen += 1
            }
            return nil
        }
    }

    func memberIndex() -> MemberLookup { MemberLookup(members: members, table: members.count > 16 ? indexByOccurrence() : nil) }

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
    /// Where each element was read (as many as `elements`), or empty: then element i is item i of `layout`.
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
    func source(_ index: Int) -> ItemSource? {
        guard sources.isEmpty else { return sources[index] }
        return layout.map { ItemSource(container: $0, index: index) }
    }

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
