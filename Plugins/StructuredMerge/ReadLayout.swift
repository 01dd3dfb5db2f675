/// A JSON document's bytes as read, with where each container's whitespace, separators and member heads are in them:
/// what lets a merge write back, byte for byte, what no side changed.
///
/// One per document read, shared by every container and item of it, so that
/// reading records no more than a few offsets per item and values stay cheap to
/// copy. `@unchecked Sendable`: the `JSONParser` that makes one fills its tables
/// before any value that refers to it is returned, and nothing writes them after.
final class ReadDocument: @unchecked Sendable {
    /// A stretch of `bytes`.
    struct Span {
        var start: UInt32
        var end: UInt32
    }

    /// One container's whitespace, and where its separators and heads start in the shared tables.
    struct Container {
        /// After the opening bracket, before the first item (all the whitespace of an empty container).
        var opening = Span(start: 0, end: 0)
        /// After the last item, before the closing bracket.
        var closing = Span(start: 0, end: 0)
        /// Its separators are `separators[firstSeparator..<firstSeparator + separatorCount]`.
        var firstSeparator: UInt32 = 0
        var separatorCount: UInt32 = 0
        /// An object's member heads are `heads[firstHead...]`, one per member.
        var firstHead: UInt32 = 0
        /// How many items it was read with.
        var itemCount: UInt32 = 0
    }

    let bytes: [UInt8]
    var containers: [Container] = []
    /// The bytes between two items (whitespace, the comma, whitespace), container by container.
    var separators: [Span] = []
    /// The bytes of a member before its value (the key's spelling, whitespace, the colon, whitespace), by container.
    var heads: [Span] = []

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    subscript(span: Span) -> ArraySlice<UInt8> { bytes[Int(span.start)..<Int(span.end)] }
}

/// How a JSON container was written: the bytes inside its brackets that belong to no item's value.
struct ContainerLayout: Sendable {
    let document: ReadDocument
    let number: Int

    private var record: ReadDocument.Container { document.containers[number] }

    var opening: ArraySlice<UInt8> { document[record.opening] }
    var closing: ArraySlice<UInt8> { document[record.closing] }

    /// How many items it was read with.
    var itemCount: Int { Int(record.itemCount) }

    /// The container as read, from its opening bracket to its closing one.
    var bytes: ArraySlice<UInt8> { document.bytes[Int(record.opening.start) - 1..<Int(record.closing.end) + 1] }

    /// True for the same container of the same document.
    func isSame(as other: ContainerLayout) -> Bool { document === other.document && number == other.number }

    /// The bytes after item `index` as read, nil for the last.
    func separator(after index: Int) -> ArraySlice<UInt8>? {
        let record = record
        guard index >= 0, index < Int(record.separatorCount) else { return nil }
        return document[document.separators[Int(record.firstSeparator) + index]]
    }

    /// Member `index`'s bytes before its value.
    func head(at index: Int) -> ArraySlice<UInt8> { document[document.heads[Int(record.firstHead) + index]] }

    /// The bytes to put between items `before` and `after` of a merge written in this container's layout.
    ///
    /// Items read one after the other keep what was between them. Otherwise,
    /// when one of them is this container's own item, the gap next to it here:
    /// after `before` (an item was removed or inserted after it, or the next
    /// one replaced), or before `after` (the one before it was replaced).
    /// Else this container's first separator, else one like its opening.
    func separator(between before: ItemSource?, and after: ItemSource?, afterComma: String) -> ArraySlice<UInt8> {
        if let before, let kept = before.separator(before: after) { return kept }
        if let before, before.container.isSame(as: self), let gap = separator(after: before.index) { return gap }
        if let after, after.container.isSame(as: self), let gap = separator(after: after.index - 1) { return gap }
        if let first = separator(after: 0) { return first }
        // A container read with one item or none: its opening's line break and indentation when it spans lines.
        if opening.contains(UInt8(ascii: "\n")) { return [UInt8(ascii: ",")] + opening }
        return ArraySlice(("," + afterComma).utf8)
    }
}

/// Where an item of a container was read: what lets a merge write back the bytes between two items no side moved apart.
struct ItemSource: Sendable {
    /// The container it was read in.
    let container: ContainerLayout
    /// Its position in that container.
    let index: Int

    /// The bytes that went between `self` and `next` where both were read, when `next` followed `self` there.
    func separator(before next: ItemSource?) -> ArraySlice<UInt8>? {
        guard let next, next.container.isSame(as: container), next.index == index + 1 else { return nil }
        return container.separator(after: index)
    }

    /// A member's bytes before its value as read: its key's spelling, whitespace, the colon, whitespace.
    var head: ArraySlice<UInt8> { container.head(at: index) }
}
