import Foundation
import TruceCore

/// The key-by-key merge of JSON objects, written as the current version's bytes with only the changed values replaced.
///
/// Where the base and every head hold an object, it merges member by member,
/// at any depth; anywhere else the value is compared whole: when no head
/// changed it from the base it stays, otherwise the latest head among those
/// that changed it wins (adding, changing and removing are all changes). A
/// decision names each place where heads changed a value differently.
struct KeyedJSONMerge {
    /// One value in one version's text.
    struct Node {
        let spans: JSONSpans
        let span: Range<Int>
        var canonical: Data { spans.canonical(span) }
        var bytes: ArraySlice<UInt8> { spans.bytes[span] }
        var members: [JSONSpans.Member]? { spans.members(of: span) }
        /// True for an object, seen from its first byte: no scan of its members.
        var isObject: Bool { spans.bytes[span.lowerBound] == UInt8(ascii: "{") }

        /// Every member by its key and occurrence, with its index: read once for a whole object's merge, where looking
        /// each key up again would scan the object once per key.
        func memberTable() -> MemberTable {
            let members = members ?? []
            var byKey: [KeyOccurrence: Int] = [:]
            var order: [(name: String, key: KeyOccurrence)] = []
            var counts: [[UInt8]: Int] = [:]
            for (index, member) in members.enumerated() {
                let bytes = Array(member.key.utf8)
                let key = KeyOccurrence(key: bytes, occurrence: counts[bytes, default: 0])
                counts[bytes] = key.occurrence + 1
                byKey[key] = index
                order.append((member.key, key))
            }
            return (order, byKey, members)
        }

        /// The `occurrence`-th member called `key` (a key JSON allows more than once is matched n-th to n-th).
        func member(_ key: String, occurrence: Int = 0) -> (member: JSONSpans.Member, node: Node)? {
            guard let index = members.flatMap({ Self.index(of: key, occurrence: occurrence, in: $0) }) else { return nil }
            let member = members![index]
            return (member, Node(spans: spans, span: member.valueSpan))
        }

        static func index(of key: String, occurrence: Int, in members: [JSONSpans.Member]) -> Int? {
            var seen = 0
            for (index, member) in members.enumerated() where member.key.utf8.elementsEqual(key.utf8) {
                if seen == occurrence { return index }
                seen += 1
            }
            return nil
        }
    }

    /// An object's members in order, each key's occurrence, and each member's index by its key and occurrence.
    typealias MemberTable = (order: [(name: String, key: KeyOccurrence)], byKey: [KeyOccurrence: Int], members: [JSONSpans.Member])

    /// A member's key, by its bytes, and how many members before it have that key.
    struct KeyOccurrence: Hashable {
        let key: [UInt8]
        let occurrence: Int
    }

    /// What a place merged to.
    private enum Merged {
        /// The current version's value, bytes and all.
        case current
        /// Head `index`'s value.
        case head(Int)
        /// An object merged member by member, written.
        case written([UInt8])
        case absent
    }

    let conflict: ConflictSet
    private var decisions: [ResolutionDecision] = []

    init(_ conflict: ConflictSet) { self.conflict = conflict }

    /// The merged document, and a decision for each place whose changes differed. Every head must hold a JSON object.
    mutating func merged() -> (content: Data, decisions: [ResolutionDecision]) {
        let heads = conflict.heads.map { side in
            let spans = JSONSpans(side.content ?? Data())
            return Node(spans: spans, span: spans.root)
        }
        // With no base (unrelated histories, or a base that is a deletion or no object) every key is an addition.
        let empty = JSONSpans(Data("{}".utf8))
        var base = Node(spans: empty, span: empty.root)
        if let content = conflict.base?.content {
            let spans = JSONSpans(content)
            if spans.members(of: spans.root) != nil { base = Node(spans: spans, span: spans.root) }
        }
        let current = heads[0]
        var out = Array(current.spans.bytes[..<current.span.lowerBound])
        switch merge(base: base, heads: heads, path: []) {
        case .written(let bytes): out += bytes
        case .head(let index): out += heads[index].bytes
        case .current, .absent: out += current.bytes
        }
        out += current.spans.bytes[current.span.upperBound...]
        return (Data(out), decisions)
    }

    private mutating func merge(base: Node?, heads: [Node?], path: [String]) -> Merged {
        if let base, base.isObject, heads.allSatisfy({ $0?.isObject == true }) {
            let written = mergeObject(base: base, heads: heads.map { $0! }, path: path)
            return written[...] == heads[0]!.bytes ? .current : .written(written)
        }
        let baseValue = base?.canonical
        let values = heads.map { $0?.canonical }
        let changers = heads.indices.filter { values[$0] != baseValue }
        guard
            let winner = changers.max(by: { LastWriterWins.isEarlier(conflict.heads[$0].version, than: conflict.heads[$1].version) })
        else { return .current }
        let dropped = changers.filter { values[$0] != values[winner] }
        if !dropped.isEmpty {
            func value(_ index: Int) -> ResolutionDecision.Value {
                ResolutionDecision.Value(conflict.heads[index].version, content: values[index])
            }
            decisions.append(
                ResolutionDecision(point: Self.pointer(path), rule: LastWriterWins.rule, kept: value(winner), dropped: dropped.map(value)))
        }
        if values[winner] == values[0] { return .current }
        return heads[winner] == nil ? .absent : .head(winner)
    }

    /// The current head's object with each member merged: its bytes where the merge kept its value.
    private mutating func mergeObject(base: Node, heads: [Node], path: [String]) -> [UInt8] {
        let current = heads[0]
        let tables = heads.map { $0.memberTable() }, baseTable = base.memberTable()
        // The current head's keys in its order, then those only the others have, in head order, then the base's.
        var keys: [(name: String, key: KeyOccurrence)] = []
        var seen = Set<KeyOccurrence>()
        for table in tables + [baseTable] {
            for entry in table.order where seen.insert(entry.key).inserted { keys.append(entry) }
        }
        func member(of node: Node, in table: MemberTable, _ key: KeyOccurrence) -> (member: JSONSpans.Member, node: Node)? {
            table.byKey[key].map { (table.members[$0], Node(spans: node.spans, span: table.members[$0].valueSpan)) }
        }
        var edits: [Int: JSONSpans.Edit] = [:]
        var additions: [(key: ArraySlice<UInt8>, value: [UInt8])] = []
        for (name, key) in keys {
            let found = heads.indices.map { member(of: heads[$0], in: tables[$0], key) }
            let merged = merge(base: member(of: base, in: baseTable, key)?.node, heads: found.map { $0?.node }, path: path + [name])
            let index = tables[0].byKey[key]
            switch (merged, index) {
            case (.current, _), (.absent, nil): break
            case (.absent, let index?): edits[index] = .remove
            case (.written(let bytes), let index?): edits[index] = .value(bytes)
            case (.head(let head), let index?): edits[index] = .value(Array(found[head]!.node.bytes))
            case (.head(let head), nil):
                let (member, node) = found[head]!
                additions.append((heads[head].spans.bytes[member.keySpan], Array(node.bytes)))
            case (.written, nil): break  // only where the current head holds the object
            }
        }
        return current.spans.rewritten(current.span, edits: edits, additions: additions)
    }

    /// The current version with the value `dropped` holds at `tokens` in place of its own (removed where `dropped`
    /// has none); nil when a member on the way is not an object in the current version.
    static func restoring(_ tokens: [String], from dropped: Data, into current: Data) -> Data? {
        let (droppedSpans, currentSpans) = (JSONSpans(dropped), JSONSpans(current))
        var value: Node? = Node(spans: droppedSpans, span: droppedSpans.root)
        var key: ArraySlice<UInt8>?
        for token in tokens {
            let found = value?.member(token)
            (value, key) = (found?.node, found.map { droppedSpans.bytes[$0.member.keySpan] })
        }
        guard let last = tokens.last,
            let written = setting(
                tokens.dropLast(), last, in: Node(spans: currentSpans, span: currentSpans.root),
                to: value.map { (key!, Array($0.bytes)) })
        else { return nil }
        let root = currentSpans.root
        return Data(currentSpans.bytes[..<root.lowerBound] + written + currentSpans.bytes[root.upperBound...])
    }

    /// `node`'s object with the member `last` below `steps` set to `value` (nil: removed).
    private static func setting(
        _ steps: ArraySlice<String>, _ last: String, in node: Node, to value: (key: ArraySlice<UInt8>, bytes: [UInt8])?
    ) -> [UInt8]? {
        guard let members = node.members else { return nil }
        let name = steps.first ?? last
        let index = members.firstIndex { $0.key.utf8.elementsEqual(name.utf8) }
        var edits: [Int: JSONSpans.Edit] = [:]
        var additions: [(key: ArraySlice<UInt8>, value: [UInt8])] = []
        if !steps.isEmpty {
            guard let index, let inner = setting(steps.dropFirst(), last, in: Node(spans: node.spans, span: members[index].valueSpan), to: value)
            else { return nil }
            edits[index] = .value(inner)
        } else if let index {
            edits[index] = value.map { .value($0.bytes) } ?? .remove
        } else if let value {
            additions.append((value.key, value.bytes))
        }
        return node.spans.rewritten(node.span, edits: edits, additions: additions)
    }

    /// The JSON Pointer of `path` (RFC 6901: `~` is `~0`, `/` is `~1`).
    static func pointer(_ path: [String]) -> String {
        path.map { "/" + $0.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1") }.joined()
    }
}
